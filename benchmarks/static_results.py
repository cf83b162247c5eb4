"""Upload a 1,000,000-line TREC run as a static endpoint's results: time and peak memory.

    .venv/bin/python benchmarks/static_results.py [--lines 1000000] [--database URL]

The file is written to a temporary directory first (not counted), then read through
``results.store_results`` exactly as ``PUT /api/v1/search-endpoints/{id}/results`` reads
it. Peak memory is the Python heap's peak during the upload (tracemalloc), which must not
grow with the file, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from app.db import make_engine, make_session_factory, migrate, session_scope
from app.endpoints import results
from app.models import SearchEndpoint, User
from app.vocabulary import Engine


def _write_run(path: Path, lines: int, per_query: int = 100) -> None:
    with path.open("w") as out:
        for n in range(lines):
            qid, rank = divmod(n, per_query)
            out.write(f"q{qid} Q0 doc{(n * 7919) % 1_000_003} {rank + 1} {1000 - rank}.5 bench\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--database", default=None, help="default: a fresh SQLite file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database or f"sqlite:///{tmp}/bench.db"
        engine = make_engine(url)
        migrate(engine)
        factory = make_session_factory(engine)
        run_file = Path(tmp) / "run.trec"
        _write_run(run_file, args.lines)
        with session_scope(factory) as session:
            user = User(email=f"bench-{time.time_ns()}@example.com", password_hash="x")
            session.add(user)
            session.flush()
            endpoint = SearchEndpoint(owner_id=user.id, name="bench", engine=Engine.STATIC, url="")
            session.add(endpoint)
            session.commit()
            tracemalloc.start()
            started = time.perf_counter()
            with run_file.open(encoding="utf-8", newline="") as stream:
                summary = results.store_results(
                    session=session, endpoint=endpoint, stream=stream, fmt="trec"
                )
            elapsed = time.perf_counter() - started
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        engine.dispose()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"lines: {args.lines:,}  queries: {summary.queries:,}  docs: {summary.docs:,}")
    print(f"upload: {elapsed:.1f} s ({args.lines / elapsed:,.0f} lines/s)")
    print(
        f"python heap peak during upload: {peak / 2**20:.1f} MiB; "
        f"process peak RSS: {rss_mb:.0f} MiB"
    )


if __name__ == "__main__":
    main()
