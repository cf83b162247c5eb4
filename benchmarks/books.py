"""A book of 50,000 pairs judged by 3 raters: `next` latency and agreement time.

Builds the book in a temporary SQLite database (or, with --database-url, in an empty
PostgreSQL database you name), fills judgements for two states, and prints the median of
several timings of `GET /books/{id}/next` (service alone and the whole route) and of the
agreement (alpha over all raters and kappa for each pair of raters).

States:
- "spread": each rater has judged a random 60% of the pairs (ratings 0-3, correlated);
- "skewed": rater 1 alone judged the first 30,000 pairs, rater 2 the other 20,000, so
  that rater 1's next pair lies behind 30,000 pairs of the same (lowest) count.

    python benchmarks/books.py [--database-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import delete, insert, update
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.books import agreement as agreement_service
from app.books import service as book_service
from app.books.schemas import BookCreate
from app.config import Settings
from app.db import session_scope
from app.main import create_app
from app.models import Book, BookRater, Judgement, Pair, User
from app.outbound.policy import OutboundPolicy, install_policy

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

PAIRS = 50_000
RATERS = 3
REPEAT_NEXT = 50
REPEAT_AGREEMENT = 5
PASSWORD = "benchmark password"


def median_ms(action: Callable[[], object], repeat: int) -> float:
    """Return the median wall time of an action, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def build_book(factory: sessionmaker[Session]) -> tuple[int, list[int], list[str]]:
    """Create the raters, the book and its pairs; return (book id, pair ids, API keys)."""
    with session_scope(factory) as session:
        users = [
            user_service.create_user(
                session=session, email=f"rater{n}@example.com", password=PASSWORD
            )
            for n in range(RATERS)
        ]
        keys = [
            user_service.create_api_key(session=session, user=u, name="bench")[1] for u in users
        ]
        book = book_service.create_book(
            session=session, user=users[0], body=BookCreate(name="Big", scale=[0, 1, 2, 3])
        )
        session.execute(
            insert(Pair),
            [
                {
                    "book_id": book.id,
                    "query_text": f"query {n // 10}",
                    "doc_id": f"doc-{n}",
                    "fields": {"title": f"Title {n}"},
                    "judgement_count": 0,
                }
                for n in range(PAIRS)
            ],
        )
        session.commit()
        pair_ids = list(
            session.scalars(
                Pair.__table__.select()
                .with_only_columns(Pair.id)
                .where(Pair.book_id == book.id)
                .order_by(Pair.id)
            )
        )
        return book.id, pair_ids, keys


def fill(factory: sessionmaker[Session], book_id: int, plan: dict[int, list[int]]) -> None:
    """Replace the book's judgements: user id -> the pair ids they judged."""
    rng = random.Random(7)
    truth: dict[int, int] = {}
    counts: dict[int, int] = {}
    bits: dict[int, int] = {}
    rows = []
    for slot, (user_id, pairs) in enumerate(plan.items()):
        for pair_id in pairs:
            base = truth.setdefault(pair_id, rng.randint(0, 3))
            rating = min(3, max(0, base + rng.choice((-1, 0, 0, 0, 1))))
            rows.append(
                {
                    "book_id": book_id,
                    "pair_id": pair_id,
                    "user_id": user_id,
                    "rating": float(rating),
                    "unrateable": False,
                }
            )
            counts[pair_id] = counts.get(pair_id, 0) + 1
            bits[pair_id] = bits.get(pair_id, 0) | (1 << slot)
    with session_scope(factory) as session:
        session.execute(delete(Judgement).where(Judgement.book_id == book_id))
        session.execute(delete(BookRater).where(BookRater.book_id == book_id))
        session.execute(
            update(Pair).where(Pair.book_id == book_id).values(judgement_count=0, rater_bits=0)
        )
        session.execute(
            insert(BookRater),
            [{"book_id": book_id, "user_id": u, "slot": n} for n, u in enumerate(plan)],
        )
        for start in range(0, len(rows), 10_000):
            session.execute(insert(Judgement), rows[start : start + 10_000])
        groups: dict[tuple[int, int], list[int]] = {}
        for pair_id, count in counts.items():
            groups.setdefault((count, bits[pair_id]), []).append(pair_id)
        for (count, mask), ids in groups.items():
            for start in range(0, len(ids), 5_000):
                session.execute(
                    update(Pair)
                    .where(Pair.id.in_(ids[start : start + 5_000]))
                    .values(judgement_count=count, rater_bits=mask)
                )
        session.commit()
    engine = factory.kw["bind"]
    if engine.dialect.name == "postgresql":
        # What autovacuum does after bulk writes: statistics, and the visibility map that
        # lets the next-pair walk read the index alone.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE book_pairs")
            conn.exec_driver_sql("VACUUM ANALYZE judgements")


def measure(
    label: str, factory: sessionmaker[Session], client: TestClient, book_id: int, keys: list[str]
) -> None:
    """Print the timings of next (per rater) and agreement for the current judgements."""
    with session_scope(factory) as session:
        book = session.get(Book, book_id)
        assert book is not None
        users = list(
            session.scalars(User.__table__.select().with_only_columns(User.id).order_by(User.id))
        )
        for n, user_id in enumerate(users):
            user = session.get(User, user_id)
            assert user is not None
            service = median_ms(
                functools.partial(book_service.next_pair, session=session, book=book, user=user),
                REPEAT_NEXT,
            )
            headers = {"Authorization": f"Bearer {keys[n]}"}
            route = median_ms(
                functools.partial(client.get, f"/api/v1/books/{book_id}/next", headers=headers),
                REPEAT_NEXT,
            )
            print(f"{label:7} next rater{n}: service {service:6.2f} ms, route {route:6.2f} ms")
        result = agreement_service.agreement(session=session, book=book)
        took = median_ms(
            lambda: agreement_service.agreement(session=session, book=book), REPEAT_AGREEMENT
        )
        print(
            f"{label:7} agreement: {took:7.1f} ms (alpha {result.krippendorff_alpha}, "
            f"pairs {result.pairs}, multi {result.pairs_multi})"
        )


def main() -> None:
    """Build the book, then time both states."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", help="an empty database (default: temporary SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        app = create_app(
            Settings(
                trusted_engine_hosts=LOOPBACK,
                data_dir=Path(tmp),
                database_url=url,
                secret_key="bench",
            )
        )
        with TestClient(app) as client:
            factory: sessionmaker[Session] = app.state.session_factory
            started = time.perf_counter()
            book_id, pair_ids, keys = build_book(factory)
            with session_scope(factory) as session:
                users = list(
                    session.scalars(
                        User.__table__.select().with_only_columns(User.id).order_by(User.id)
                    )
                )
            rng = random.Random(11)
            spread = {u: sorted(rng.sample(pair_ids, int(PAIRS * 0.6))) for u in users}
            fill(factory, book_id, spread)
            judged = sum(map(len, spread.values()))
            took = time.perf_counter() - started
            dialect = app.state.engine.dialect.name
            print(f"built {PAIRS} pairs, {judged} judgements in {took:.1f} s ({dialect})")
            measure("spread", factory, client, book_id, keys)
            skewed = {users[0]: pair_ids[:30_000], users[1]: pair_ids[30_000:]}
            fill(factory, book_id, skewed)
            measure("skewed", factory, client, book_id, keys)


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
