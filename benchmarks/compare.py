"""Server time of comparing two 10,000-query runs, statistics and overlap included.

Builds a temporary SQLite database with a 10,000-query case, two finished runs whose
rankings differ (10 docs per query) and three ratings on every query, so that all 10,000
queries are paired in the t-test and the randomization test (10,000 sign flips). Times the
statistics alone, the compare data function, and the JSON route through the ASGI app.

    python benchmarks/compare.py
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.compare import service as compare
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.models import Case, Rating, Run, RunQuery
from app.queries import service as query_service
from app.scoring.significance import paired_stats
from app.search.policy import OutboundPolicy, install_policy

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

QUERIES = 10_000
DOCS = 10
REPEAT = 5


def _run(session: Session, case: Case, queries: list[Any], shuffle: random.Random | None) -> int:
    now = datetime.now(UTC)
    run = Run(
        case_id=case.id,
        try_number=1,
        scorer_id=case.scorer_id,
        status="finished",
        total=QUERIES,
        done=QUERIES,
        started_at=now,
        finished_at=now,
    )
    session.add(run)
    session.flush()
    rows = []
    for n, q in enumerate(queries):
        ids = [f"{n}-{d}" for d in range(DOCS)]
        if shuffle is not None:
            shuffle.shuffle(ids)
        docs = [{"id": i, "rank": r, "fields": {"title": f"T {i}"}} for r, i in enumerate(ids, 1)]
        rows.append(
            {
                "run_id": run.id,
                "query_id": q.id,
                "text": q.text,
                "position": q.position,
                "status": "scored",
                "score": 0.0,
                "num_found": DOCS,
                "docs": docs,
                "log": [],
            }
        )
    session.execute(insert(RunQuery), rows)
    return run.id


def build(factory: sessionmaker[Session]) -> tuple[int, int, int]:
    """Create the case, its two runs and the ratings; return (case id, base id, other id)."""
    with session_scope(factory) as session:
        user = user_service.create_user(
            session=session, email="b@example.com", password="benchmark password 42"
        )
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="bench", engine="opensearch", url="http://127.0.0.1:9/x"),
        )
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name="Big",
                search_endpoint_id=endpoint.id,
                query_template='{"query": {"match": {"title": "#$query##"}}}',
            ),
        )
        queries = query_service.add_queries(
            session=session, case=case, texts=[f"query number {n}" for n in range(QUERIES)]
        )
        base = _run(session, case, queries, None)
        other = _run(session, case, queries, random.Random(1))
        session.execute(
            insert(Rating),
            [
                {"query_id": q.id, "doc_id": f"{n}-{d}", "rating": float(3 - d)}
                for n, q in enumerate(queries)
                for d in range(3)
            ],
        )
        session.commit()
        return case.id, base, other


def timed(label: str, work: Callable[[], object]) -> None:
    """Print the median wall time of a few calls (after one warm-up call)."""
    work()
    samples, cpu = [], []
    for _ in range(REPEAT):
        started, started_cpu = time.perf_counter(), time.process_time()
        work()
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    # CPU time is what the work itself costs: on a busy machine wall time adds the waits.
    print(
        f"{label}: median {statistics.median(samples):.3f} s "
        f"(min {min(samples):.3f}, max {max(samples):.3f}; {REPEAT} runs), "
        f"CPU median {statistics.median(cpu):.3f} s"
    )


def main() -> None:
    """Build the data and print the timings."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        app = create_app(
            Settings(
                trusted_engine_hosts=LOOPBACK,
                data_dir=data,
                database_url=f"sqlite:///{data}/bench.db",
                secret_key="bench",
            )
        )
        with TestClient(app) as client:
            factory: sessionmaker[Session] = app.state.session_factory
            case_id, base, other = build(factory)
            with session_scope(factory) as session:
                user = user_service.get_by_email(session=session, email="b@example.com")
                assert user is not None
                _key, key = user_service.create_api_key(session=session, user=user)
                session.commit()

            def data_function() -> None:
                with session_scope(factory) as session:
                    case = session.get(Case, case_id)
                    assert case is not None
                    result = compare.compare_by_ids(
                        session=session, case=case, base_id=base, other_id=other, sort="delta"
                    )
                    assert result.stats.n == QUERIES, result.stats.n

            def route() -> None:
                response = client.get(
                    f"/api/v1/cases/{case_id}/runs/compare",
                    params={"base": base, "other": other},
                    headers={"Authorization": f"Bearer {key}"},
                )
                assert response.status_code == 200, response.text

            rng = random.Random(2)
            a = [rng.uniform(0, 100) for _ in range(QUERIES)]
            b = [x + rng.gauss(0.5, 10) for x in a]
            print(f"{QUERIES} queries in both runs, {DOCS} docs each, all paired")
            timed(f"statistics alone (t-test + {QUERIES} flips)", lambda: paired_stats(a, b))
            timed("compare data function (re-score both, stats, overlap)", data_function)
            timed("compare JSON route (server time through ASGI)", route)


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
