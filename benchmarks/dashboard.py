"""Server time of the home dashboard, whose deltas re-score up to three runs per case.

Builds a temporary SQLite database (or uses an empty PostgreSQL database you name) with
30 cases of one user, each with 50 queries (10 docs per query, 5 of them rated) and 10
finished runs, one a day; then prints the median time of the dashboard's data function, of
its JSON route and of its HTML page, each loaded again and again with nothing changed, of
a load after one rating of one case changed, and of a load with no re-score kept.

    PYTHONPATH=. python benchmarks/dashboard.py [--database-url postgresql+psycopg://...]

(From the tree's root: without PYTHONPATH, Python imports the app of the editable install,
which may be another tree's.)
"""

from __future__ import annotations

import argparse
import contextlib
import random
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session, sessionmaker
from timing import log_in, timed

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.models import Query, Rating, Run, RunQuery, User
from app.outbound.policy import OutboundPolicy, install_policy
from app.schedules.dashboard import dashboard
from app.vocabulary import QueryStatus, RunStatus

CASES, RUNS, QUERIES, DOCS, RATED = 30, 10, 50, 10, 5
REPEAT = 7
EMAIL, PASSWORD = "bench@example.com", "benchmark password"

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)


def _rows(run_id: int, query_ids: list[int], rng: random.Random) -> list[dict[str, object]]:
    """One run's rows: every query answered with DOCS docs drawn from 20 candidates."""
    rows: list[dict[str, object]] = []
    for position, query_id in enumerate(query_ids):
        picked = rng.sample(range(20), DOCS)
        docs = [
            {"id": f"{query_id}-{d}", "rank": r + 1, "fields": {"title": f"Title {d}"}}
            for r, d in enumerate(picked)
        ]
        rows.append(
            {
                "run_id": run_id,
                "query_id": query_id,
                "text": f"query {position}",
                "position": position,
                "status": QueryStatus.SCORED,
                "score": rng.uniform(0, 100),
                "num_found": 100,
                "docs": docs,
                "log": [],
            }
        )
    return rows


def build(factory: sessionmaker[Session]) -> int:
    """Create the user's cases, queries, ratings and runs; return the first query's id."""
    rng = random.Random(11)
    now = datetime.now(UTC)
    with session_scope(factory) as session:
        user = user_service.create_user(session=session, email=EMAIL, password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="e", engine="opensearch", url="http://127.0.0.1:9/x"),
        )
        for n in range(CASES):
            body = CaseCreate(name=f"case {n}", search_endpoint_id=endpoint.id, query_template="{}")
            case = case_service.create_case(session=session, user=user, body=body)
            session.execute(
                insert(Query), [{"case_id": case.id, "text": f"q{i}"} for i in range(QUERIES)]
            )
            query_ids = list(session.scalars(select(Query.id).where(Query.case_id == case.id)))
            session.execute(
                insert(Rating),
                [
                    {"query_id": q, "doc_id": f"{q}-{d}", "rating": float(rng.randint(1, 10))}
                    for q in query_ids
                    for d in rng.sample(range(20), RATED)
                ],
            )
            for r in range(RUNS):
                run = Run(
                    case_id=case.id,
                    try_number=1,
                    scorer_id=case.scorer_id,
                    status=RunStatus.FINISHED,
                    case_score=rng.uniform(30, 90),
                    total=QUERIES,
                    done=QUERIES,
                    scored=QUERIES,
                    finished_at=now - timedelta(days=RUNS - 1 - r, hours=1),
                )
                session.add(run)
                session.flush()
                session.execute(insert(RunQuery), _rows(run.id, query_ids, rng))
        session.commit()
        first: int | None = session.scalar(select(func.min(Query.id)))
        assert first is not None
        return first


def forget() -> None:
    """Drop the re-scores the dashboard keeps (a tree from before it kept them has none)."""
    with contextlib.suppress(ImportError):
        from app.runs.rescore_cache import clear

        clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        url = args.database_url or f"sqlite:///{data}/bench.db"
        app = create_app(
            Settings(trusted_engine_hosts=LOOPBACK, data_dir=data, database_url=url, secret_key="b")
        )
        with TestClient(app) as client:
            factory: sessionmaker[Session] = app.state.session_factory
            query_id = build(factory)
            log_in(client, EMAIL, PASSWORD)

            def data_only() -> None:
                with session_scope(factory) as session:
                    user = session.scalar(select(User).where(User.email == EMAIL))
                    assert user is not None
                    dashboard(session=session, user=user)

            def route(url: str) -> Callable[[], object]:
                def get() -> None:
                    response = client.get(url)
                    assert response.status_code == 200, response.status_code

                return get

            flips = iter(range(10_000))

            def after_a_rating() -> None:
                with session_scope(factory) as session:
                    value = float(next(flips) % 10 + 1)
                    session.execute(
                        update(Rating).where(Rating.query_id == query_id).values(rating=value)
                    )
                    session.commit()
                data_only()

            print(f"{CASES} cases x {RUNS} runs x {QUERIES} queries ({DOCS} docs, {RATED} rated)")
            timed("dashboard data", data_only, REPEAT)
            timed("GET /api/v1/dashboard", route("/api/v1/dashboard"), REPEAT)
            timed("GET /dashboard (route + template)", route("/dashboard"), REPEAT)
            timed("dashboard data after one case's rating changed", after_a_rating, REPEAT)

            def cold() -> None:
                forget()
                data_only()

            timed("dashboard data, nothing kept (a first load)", cold, REPEAT)


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
