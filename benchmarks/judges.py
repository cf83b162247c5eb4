"""A judge run over 5,000 pairs against a fake model answering in 100 ms, concurrency 16.

The fake (benchmarks/fake_judge_server.py, asyncio in a process of its own) speaks the
OpenAI wire format on a loopback port; the run goes through the real pipeline: the judge
client with its limits, the runner's batched writes, a temporary SQLite database (or, with
--database-url, an empty PostgreSQL database you name). The judge allows 9,600 requests a
minute (160 a second), which is also what 16 calls of 100 ms at once can reach.

Prints: wall time and pairs/s against the 160 pairs/s ceiling; the most requests the
fake saw in any 60 s window (sliding, against the judge's requests/minute); the process's
resident memory at 20%, 50% and 100% of the run (flat means no per-pair growth).

    python benchmarks/judges.py [--pairs 5000] [--rpm 9600] [--database-url postgresql+psycopg://...]

With ``--pairs 1500 --rpm 1000`` the requests/minute limit binds (about 90 s).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.books import service as book_service
from app.books.schemas import BookCreate
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.judges import runs
from app.judges import service as judge_service
from app.judges.client import JudgeClient
from app.judges.runner import execute_judge_run
from app.judges.schemas import JudgeCreate, JudgeRunCreate
from app.models import JudgeRun, Pair
from app.outbound.policy import OutboundPolicy, install_policy
from app.outbound.transport import engine_http_client

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

ROOT = Path(__file__).resolve().parent.parent
CONCURRENCY = 16
REPLY_S = 0.100
RPM = 9_600
CEILING = RPM / 60


def rss_mb() -> float:
    """Return this process's resident memory in MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def max_in_window(stamps: list[float], window_s: float = 60.0) -> int:
    """Return the most stamps in any half-open window of ``window_s`` seconds."""
    ordered = sorted(stamps)
    return max(
        (bisect.bisect_left(ordered, t + window_s) - i for i, t in enumerate(ordered)), default=0
    )


def build(factory: sessionmaker[Session], url: str, pairs: int, rpm: int) -> int:
    """Create a user, a book of ``pairs`` pairs and a judge; return a queued run's id."""
    with session_scope(factory) as session:
        user = user_service.create_user(
            session=session, email="bench@example.com", password="benchmark password"
        )
        book = book_service.create_book(
            session=session, user=user, body=BookCreate(name="Bench", scale=[0, 1, 2, 3])
        )
        session.execute(
            insert(Pair),
            [
                {
                    "book_id": book.id,
                    "query_text": f"query {i // 10}",
                    "doc_id": f"doc-{i}",
                    "fields": {"title": f"Document {i}", "grade": i % 4},
                    "judgement_count": 0,
                    "rater_bits": 0,
                }
                for i in range(pairs)
            ],
        )
        session.commit()
        judge = judge_service.create_judge(
            session=session,
            user=user,
            body=JudgeCreate(
                name="Bench judge",
                provider="openai",
                base_url=f"{url}/v1",
                model="fake",
                api_key="sk-bench",
                max_concurrency=CONCURRENCY,
                requests_per_minute=rpm,
                price_input_per_mtok=0.15,
                price_output_per_mtok=0.6,
            ),
        )
        run = runs.create_run(
            session=session,
            book=book,
            judge=judge,
            user=user,
            body=JudgeRunCreate(judge_id=judge.id),
        )
        return run.id


def progress(factory: sessionmaker[Session], run_id: int) -> int:
    with session_scope(factory) as session:
        run = session.get(JudgeRun, run_id)
        return 0 if run is None else run.judged + run.cached + run.failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=5_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--rpm", type=int, default=RPM, help="the judge's requests/minute (below 9,600 it binds)"
    )
    args = parser.parse_args()
    # The fake runs in a process of its own, so that it takes no CPU from the run's loop.
    fake = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "fake_judge_server.py"), str(REPLY_S)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert fake.stdout is not None
        llm_url = fake.stdout.readline().strip()
        run_benchmark(args, llm_url)
    finally:
        fake.terminate()
        fake.wait(timeout=10)


def run_benchmark(args: argparse.Namespace, llm_url: str) -> None:
    """Build the book, execute the run, print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{tmp}/bench.db"
        settings = Settings(
            trusted_engine_hosts=LOOPBACK, data_dir=Path(tmp), database_url=url, secret_key="bench"
        )
        engine = make_engine(settings.resolved_database_url)
        migrate(engine)
        factory = make_session_factory(engine)
        run_id = build(factory, llm_url, args.pairs, args.rpm)
        memory: dict[int, float] = {}
        stop = threading.Event()

        def watch() -> None:
            marks = [20, 50]
            while not stop.wait(0.25):
                done = progress(factory, run_id) * 100 // args.pairs
                while marks and done >= marks[0]:
                    memory[marks.pop(0)] = rss_mb()

        watcher = threading.Thread(target=watch, daemon=True)
        before = rss_mb()
        watcher.start()
        started = time.perf_counter()

        async def go() -> None:
            async with engine_http_client() as http:
                await execute_judge_run(
                    session_factory=factory, run_id=run_id, client=JudgeClient(http)
                )

        asyncio.run(go())
        elapsed = time.perf_counter() - started
        stop.set()
        watcher.join()
        memory[100] = rss_mb()
        with session_scope(factory) as session:
            run = session.get(JudgeRun, run_id)
            assert run is not None
            rated = session.scalar(select(func.count()).select_from(JudgeRun))
        rate = args.pairs / elapsed
        ceiling = min(CEILING, args.rpm / 60)
        print(f"database: {engine.dialect.name}; pairs: {args.pairs}; concurrency {CONCURRENCY}")
        print(f"status {run.status}: judged {run.judged}, cached {run.cached}, failed {run.failed}")
        print(
            f"wall time {elapsed:.1f} s; {rate:.1f} pairs/s = {rate / ceiling:.1%} of the "
            f"{ceiling:.0f} pairs/s ceiling"
        )
        stamps = [float(t) for t in httpx.get(f"{llm_url}/stamps").json()]
        print(
            f"requests sent {len(stamps)}; most in any 60 s window: "
            f"{max_in_window(stamps)} (limit {args.rpm}/min)"
        )
        at20, at50 = memory.get(20, float("nan")), memory.get(50, float("nan"))
        print(
            f"resident memory MB: before {before:.0f}, at 20% {at20:.0f}, at 50% {at50:.0f}, "
            f"at 100% {memory[100]:.0f}"
        )
        print(
            f"cost ${run.cost_usd:.4f} for {run.tokens_in} + {run.tokens_out} tokens ({rated} run)"
        )
        engine.dispose()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
