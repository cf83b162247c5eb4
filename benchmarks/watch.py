"""Watching cases over time: the dashboard, alert evaluation and schedule firing, timed.

Builds a temporary SQLite database (or uses an empty PostgreSQL database you name) with
200 cases of one user, each with 30 finished runs over 30 days and a daily schedule, and
one case of 2,000 queries with two runs; prints the median of several timings of the
dashboard (service), of evaluating a significant_drop alert on the 2,000-query run, and of
firing 200 schedules due at once.

    python benchmarks/watch.py [--database-url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, insert, update

import app.main  # noqa: F401 -- loads the domains in an order free of import cycles
from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.models import Alert, AlertCheck, AlertEvent, CaseSchedule, Query, Run, RunQuery
from app.outbound.policy import OutboundPolicy, install_policy
from app.schedules import service
from app.schedules.dashboard import dashboard
from app.schedules.evaluate import evaluate_run
from app.vocabulary import QueryStatus, RunStatus

CASES, RUNS, QUERIES = 200, 30, 2000


# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)


def _median(work: Callable[[], object], times: int = 5) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        work()
        spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'watch.db'}"
    engine = make_engine(url)
    migrate(engine)
    factory = make_session_factory(engine)
    rng = random.Random(7)
    now = datetime.now(UTC)
    with session_scope(factory) as session:
        user = user_service.create_user(
            session=session, email="b@example.com", password="bench-pass-123"
        )
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="e", engine="opensearch", url="http://127.0.0.1:9/x"),
        )
        ids = []
        for n in range(CASES + 1):
            body = CaseCreate(name=f"case {n}", search_endpoint_id=endpoint.id, query_template="{}")
            ids.append(case_service.create_case(session=session, user=user, body=body).id)
        runs = [
            {
                "case_id": case_id,
                "try_number": 1,
                "status": RunStatus.FINISHED,
                "case_score": rng.uniform(30, 90),
                "finished_at": now - timedelta(days=RUNS - r),
            }
            for case_id in ids[:CASES]
            for r in range(RUNS)
        ]
        session.execute(insert(Run), runs)
        big = ids[CASES]
        session.execute(insert(Query), [{"case_id": big, "text": f"q{i}"} for i in range(QUERIES)])
        query_ids = [q.id for q in session.query(Query).filter(Query.case_id == big)]
        for shift in (0.0, -2.0):
            run = Run(case_id=big, try_number=1, status=RunStatus.FINISHED, finished_at=now)
            session.add(run)
            session.flush()
            scores = [max(0.0, rng.uniform(20, 80) + shift) for _ in query_ids]
            run.case_score = run.recorded_score = sum(scores) / len(scores)
            session.execute(
                insert(RunQuery),
                [
                    {
                        "run_id": run.id,
                        "query_id": q,
                        "text": "q",
                        "status": QueryStatus.SCORED,
                        "score": s,
                    }
                    for q, s in zip(query_ids, scores, strict=True)
                ],
            )
        session.add(Alert(case_id=big, kind="significant_drop", alpha=0.05))
        session.add_all(
            [CaseSchedule(case_id=c, cron="@daily", next_run_at=now) for c in ids[:CASES]]
        )
        session.commit()
        last = run.id

    def show() -> object:
        with session_scope(factory) as s:
            return dashboard(session=s, user=user)

    def evaluate() -> object:
        with session_scope(factory) as s:
            s.execute(delete(AlertEvent))
            s.execute(delete(AlertCheck))
            s.commit()
            return evaluate_run(session=s, run_id=last, base_url="http://x", email_enabled=False)

    def fire() -> object:
        with session_scope(factory) as s:
            s.execute(update(CaseSchedule).values(next_run_at=now))
            s.commit()
            return service.fire_due(session=s, now=now + timedelta(seconds=1))

    print(f"dashboard, {CASES} cases x {RUNS} runs: {_median(show):.1f} ms")
    print(f"significant_drop alert on {QUERIES} queries: {_median(evaluate):.1f} ms")
    print(f"firing {CASES} due schedules (one run each): {_median(fire, 3):.1f} ms")
    engine.dispose()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
