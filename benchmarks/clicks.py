"""Click logs at scale: ingest of about 1,000,000 UBI events, then each click model over them.

Generates sessions from known relevances and position biases (50,000 searches of 2,000
query texts, 18 docs shown each, clicks by the position-based model: about 1,000,000
impression and click events), writes them as NDJSON to a temporary file, and ingests the
file through the same code as `POST /click-logs/{id}/events` (read line by line, stored in
batches), printing the rate and the process's peak memory (ru_maxrss) before and after.
Then times each model (`POST /click-logs/{id}/judgements`: read with SQL, fit, write).

    python benchmarks/clicks.py [--database-url postgresql+psycopg://...] [--searches 50000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.books import service as book_service
from app.books.schemas import BookCreate
from app.clicks import ingest, judging
from app.clicks import service as clicks
from app.clicks.schemas import ClickLogCreate, ClickModel, JudgementsBody
from app.config import Settings
from app.db import session_scope
from app.main import create_app
from app.outbound.policy import OutboundPolicy, install_policy

LOOPBACK = ("127.0.0.0/8",)
TEXTS, SHOWN = 2_000, 18


def peak_mb() -> float:
    """Return the process's peak resident memory so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_events(path: Path, searches: int, seed: int = 1) -> int:
    """Write the sessions' impression and click events as NDJSON; return how many."""
    rng = np.random.default_rng(seed)
    attract = rng.uniform(0.02, 0.9, size=(TEXTS, 40))
    bias = 1.0 / np.arange(1, SHOWN + 1) ** 0.8
    count = 0
    with path.open("wb") as out:
        for s in range(searches):
            q = int(rng.integers(TEXTS))
            docs = rng.choice(40, size=SHOWN, replace=False)
            clicks = rng.random(SHOWN) < bias * attract[q, docs]
            stamp = 1_735_689_600_000 + s * 1000
            for rank, (doc, clicked) in enumerate(zip(docs, clicks, strict=True)):
                event = {
                    "action_name": "impression",
                    "query_id": f"s{s}",
                    "timestamp": stamp,
                    "user_query": f"query {q}",
                    "event_attributes": {
                        "object": {"object_id": f"d{q}-{doc}"},
                        "position": {"ordinal": rank + 1},
                    },
                }
                out.write(orjson.dumps(event) + b"\n")
                count += 1
                if clicked:
                    out.write(orjson.dumps({**event, "action_name": "click"}) + b"\n")
                    count += 1
    return count


def run(factory: sessionmaker[Session], path: Path, events: int) -> None:
    """Ingest the file, then fit each model into a book; print the numbers."""
    with session_scope(factory) as session:
        user = user_service.create_user(
            session=session, email="b@example.com", password="benchmark password"
        )
        log = clicks.create_log(session=session, user=user, body=ClickLogCreate(name="bench"))
        book = book_service.create_book(
            session=session, user=user, body=BookCreate(name="bench", scale=[0, 1, 2, 3])
        )
        before = peak_mb()
        started = time.perf_counter()
        with path.open("rb") as stream:
            records = ingest.read_records(stream, ndjson=True)
            result = clicks.ingest_records(session=session, log=log, kind="events", records=records)
        took = time.perf_counter() - started
        print(
            f"ingest: {result.stored:,} of {events:,} events in {took:.1f} s "
            f"({result.stored / took:,.0f} events/s); peak memory {before:.0f} MB before, "
            f"{peak_mb():.0f} MB after"
        )
        models: tuple[ClickModel, ...] = ("coec", "pbm", "sdbn", "dbn")
        for model in models:
            started = time.perf_counter()
            body = JudgementsBody(book_id=book.id, model=model, min_impressions=10)
            done = judging.judge(session=session, log=log, book=book, body=body)
            print(
                f"{model}: {done.pairs_judged:,} of {done.pairs_seen:,} pairs judged in "
                f"{time.perf_counter() - started:.1f} s; peak memory {peak_mb():.0f} MB"
            )


def main() -> None:
    """Generate the events, then ingest and judge them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="an empty database (default: temporary SQLite)")
    parser.add_argument("--searches", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.ndjson"
        events = write_events(path, args.searches)
        print(f"generated {events:,} events ({path.stat().st_size / 1e6:.0f} MB of NDJSON)")
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        settings = Settings(
            trusted_engine_hosts=LOOPBACK, data_dir=Path(tmp), database_url=url, secret_key="b"
        )
        app = create_app(settings)
        with TestClient(app):
            run(app.state.session_factory, path, events)


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
