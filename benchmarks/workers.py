"""Throughput of the job queue with one worker and with two.

Starts an engine that answers every search after a fixed latency (20 ms; asyncio, in its own
process, so it costs little CPU), a fresh PostgreSQL database, and a case of 300 queries.
Each round queues 6 runs of the case at once and times them until the last one finishes,
with 1 and then 2 `relevo worker` processes (started and registered before the clock
starts). Prints each round, the median queries/s of each setting, and the speed-up
(target >= 1.8); then the CPU each party spends per query (workers, engine, PostgreSQL and
this script, read from /proc) with each setting, and the throughput that this machine's
cores allow two workers at their cost, so a result can be told apart from the machine's limit.

Usage: python benchmarks/workers.py [--queries 300] [--runs 6] [--latency-ms 20] [--rounds 3]
       (PostgreSQL at RELEVO_TEST_POSTGRES_URL, default postgresql+psycopg://postgres@127.0.0.1:5432/test)
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson
from sqlalchemy import create_engine, func, select, text

from app.accounts import service as users
from app.cases import service as cases
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.endpoints import service as endpoints
from app.endpoints.schemas import EndpointCreate
from app.models import Case, Run
from app.outbound.policy import OutboundPolicy, install_policy
from app.queries import service as queries
from app.runs import service as runs
from app.runs.queue import RunQueue
from app.scorers import service as scorers
from app.vocabulary import ACTIVE_RUN_STATUSES

ROOT = Path(__file__).resolve().parents[1]
ADMIN_URL = os.environ.get(
    "RELEVO_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

TEMPLATE = '{"query": {"match": {"title": "#$query##"}}}'
ANSWER = orjson.dumps(
    {
        "hits": {
            "total": {"value": 10},
            "hits": [
                {"_id": str(i), "_score": 10 - i, "_source": {"title": f"doc {i}"}}
                for i in range(10)
            ],
        }
    }
)


def _serve_engine(port: int, latency_s: float) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                await asyncio.sleep(latency_s)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(ANSWER)}\r\n\r\n".encode()
                    + ANSWER
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _postgres_pids() -> list[int]:
    """Return the PostgreSQL server's processes on this machine (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


class CpuMeter:
    """CPU seconds used during a round by the workers, the engine, PostgreSQL and this script."""

    def __init__(self, workers: list[int], engine: int) -> None:
        # "this script" queues the runs and polls for their end: it takes the same cores.
        self.groups = {"workers": workers, "engine": [engine], "this script": [os.getpid()]}
        self.before = self._read()

    def _read(self) -> dict[str, dict[int, float]]:
        groups = {**self.groups, "PostgreSQL": _postgres_pids()}
        return {name: {pid: _cpu_seconds(pid) for pid in pids} for name, pids in groups.items()}

    def used(self) -> dict[str, float]:
        """Return the CPU seconds of each group since the meter started."""
        after = self._read()
        return {
            name: sum(t - self.before[name].get(pid, 0.0) for pid, t in after[name].items())
            for name in after
        }


def _registered_workers(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(text("SELECT count(*) FROM procrastinate_workers")).scalar_one()
            )
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8, help="chunks per worker")
    parser.add_argument(
        "--max-concurrency", type=int, default=32, help="the endpoint's limit, across all workers"
    )
    args = parser.parse_args()

    port = _free_port()
    engine_process = multiprocessing.Process(
        target=_serve_engine, args=(port, args.latency_ms / 1000), daemon=True
    )
    engine_process.start()
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    database = f"relevo_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{database}"'))
    url = ADMIN_URL.rsplit("/", 1)[0] + f"/{database}"
    tmp = Path(tempfile.mkdtemp(prefix="relevo-bench-"))
    started: list[subprocess.Popen[bytes]] = []
    try:
        db = make_engine(url)
        migrate(db)
        factory = make_session_factory(db)
        with session_scope(factory) as session:
            scorers.seed_presets(session=session)
            user = users.create_user(
                session=session, email="bench@example.com", password="benchmark-password"
            )
            endpoint = endpoints.create_endpoint(
                session=session,
                user=user,
                body=EndpointCreate(
                    name="slow",
                    engine="opensearch",
                    url=f"http://127.0.0.1:{port}/docs",
                    max_concurrency=args.max_concurrency,
                ),
            )
            case = cases.create_case(
                session=session,
                user=user,
                body=CaseCreate(
                    name="bench", search_endpoint_id=endpoint.id, query_template=TEMPLATE
                ),
            )
            queries.add_queries(
                session=session, case=case, texts=[f"query {n}" for n in range(args.queries)]
            )
            case_id = case.id
        settings = Settings(
            trusted_engine_hosts=LOOPBACK,
            data_dir=tmp,
            database_url=url,
            secret_key="bench",
            run_queue="postgres",
        )
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "RELEVO_RUN_QUEUE": "postgres",
            "RELEVO_ALLOWED_ENGINE_HOSTS": ",".join(LOOPBACK),
            "PYTHONPATH": str(ROOT),
        }

        def start_workers(count: int) -> list[subprocess.Popen[bytes]]:
            command = [
                sys.executable,
                "-m",
                "app.cli",
                "worker",
                "--concurrency",
                str(args.concurrency),
            ]
            children = [
                subprocess.Popen(
                    command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                for _ in range(count)
            ]
            started.extend(children)
            deadline = time.monotonic() + 60
            while _registered_workers(url) < count:
                if time.monotonic() > deadline:
                    raise RuntimeError("the workers did not start")
                time.sleep(0.1)
            return children

        def stop(children: list[subprocess.Popen[bytes]]) -> None:
            for child in children:
                child.send_signal(signal.SIGTERM)
            for child in children:
                child.wait(timeout=30)
            while _registered_workers(url):
                time.sleep(0.1)

        async def one_round() -> float:
            queue = RunQueue(
                database_url=url, session_factory=factory, chunk_size=settings.run_chunk_size
            )
            await queue.open()
            try:
                with session_scope(factory) as session:
                    case = session.get(Case, case_id)
                    assert case is not None
                    ids = [runs.create_run(session=session, case=case).id for _ in range(args.runs)]
                # The end is polled on one open connection every 50 ms: this script shares the
                # cores with the workers, so its polling must cost them next to nothing.
                still_active = select(func.count()).where(
                    Run.id.in_(ids), Run.status.in_(ACTIVE_RUN_STATUSES)
                )
                with db.connect() as poll:
                    begin = time.perf_counter()
                    await asyncio.gather(*(queue.enqueue(run_id) for run_id in ids))
                    while poll.execute(still_active).scalar_one():
                        poll.rollback()
                        await asyncio.sleep(0.05)
                    elapsed = time.perf_counter() - begin
                with session_scope(factory) as session:
                    finished = session.scalar(
                        select(func.count()).where(
                            Run.id.in_(ids), Run.status == "finished", Run.done == args.queries
                        )
                    )
                assert finished == args.runs, "every run must finish with all its queries"
                return elapsed
            finally:
                await queue.close()

        total = args.runs * args.queries
        print(
            f"{args.runs} runs x {args.queries} queries at once, "
            f"engine latency {args.latency_ms:g} ms, {args.concurrency} chunks per worker, "
            f"endpoint max_concurrency {args.max_concurrency}, {os.cpu_count()} CPUs"
        )
        rates: dict[int, list[float]] = {1: [], 2: []}
        cpu: dict[int, dict[str, list[float]]] = {1: {}, 2: {}}
        for n in range(args.rounds):
            for count in (1, 2):
                children = start_workers(count)
                meter = CpuMeter([c.pid for c in children], engine_process.pid or 0)
                elapsed = asyncio.run(one_round())
                used = meter.used()
                stop(children)
                rates[count].append(total / elapsed)
                for name, seconds in used.items():
                    cpu[count].setdefault(name, []).append(seconds * 1000 / total)
                print(
                    f"  round {n + 1}, {count} worker(s): {elapsed:.2f} s, "
                    f"{total / elapsed:.0f} queries/s; CPU per query: "
                    + ", ".join(f"{name} {s * 1000 / total:.2f} ms" for name, s in used.items())
                )
        one, two = statistics.median(rates[1]), statistics.median(rates[2])
        print(f"1 worker:  median {one:.0f} queries/s")
        print(f"2 workers: median {two:.0f} queries/s")
        print(f"speed-up 2 vs 1: {two / one:.2f}x  (target >= 1.8)")
        # What the machine allows: two workers share every core with the engine, PostgreSQL
        # and this script, so the CPU all of them spend per query (with two workers) caps the
        # throughput.
        per_query = {
            count: {name: statistics.median(values) for name, values in cpu[count].items()}
            for count in (1, 2)
        }
        for count, medians in per_query.items():
            print(
                f"CPU per query with {count} worker(s) (median): "
                + ", ".join(f"{name} {ms:.2f} ms" for name, ms in medians.items())
            )
        cores = os.cpu_count() or 1
        spent = sum(per_query[2].values())
        cap = cores * 1000 / spent if spent else float("inf")
        print(
            f"on {cores} CPUs that caps 2 workers at {cap:.0f} queries/s "
            f"({cap / one:.2f}x the 1-worker median); they reached {two:.0f} "
            f"({two / cap:.0%} of the cap)"
        )
        db.dispose()
    finally:
        for child in started:
            if child.poll() is None:
                child.kill()
        engine_process.terminate()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
