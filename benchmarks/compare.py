"""Server time of comparing two 10,000-query runs, statistics and overlap included.

Builds a temporary SQLite database with a 10,000-query case, two finished runs whose
rankings differ (10 docs per query) and three ratings on every query, so that all 10,000
queries are paired in the t-test and the randomization test (10,000 sign flips). Times the
statistics alone, the compare data function, and the JSON route through the ASGI app, with
the case's one metric (Classic), then with six (Classic and five presets as extra metrics);
then the compare page (HTML, logged in) of a 25-query case with three metrics.

Targets (issue 37): the JSON route <= 1.0 s with one metric, <= 2.0 s with six; the page
<= 0.15 s. Wall time on a busy machine adds waits: the CPU time is what the work costs.

    python benchmarks/compare.py
"""

from __future__ import annotations

import random
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import insert, select
from sqlalchemy.orm import Session, sessionmaker
from timing import timed

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.compare import service as compare
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.models import Case, Rating, Run, RunQuery, Scorer
from app.outbound.policy import OutboundPolicy, install_policy
from app.queries import service as query_service
from app.scoring.significance import paired_stats

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

QUERIES = 10_000
DOCS = 10
REPEAT = 5


EMAIL, PASSWORD = "b@example.com", "benchmark password 42"
SIX = ["NDCG@10", "P@10", "AP@10", "RR@10", "ERR@10"]  # extra metrics beside Classic


def _run(session: Session, case: Case, queries: list[Any], shuffle: random.Random | None) -> int:
    now = datetime.now(UTC)
    run = Run(
        case_id=case.id,
        try_number=1,
        scorer_id=case.scorer_id,
        status="finished",
        total=len(queries),
        done=len(queries),
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


def build(factory: sessionmaker[Session], count: int = QUERIES) -> tuple[int, int, int]:
    """Create the case, its two runs and the ratings; return (case id, base id, other id)."""
    with session_scope(factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        if user is None:
            user = user_service.create_user(session=session, email=EMAIL, password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(
                name=f"bench {count}", engine="opensearch", url="http://127.0.0.1:9/x"
            ),
        )
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name=f"Case of {count}",
                search_endpoint_id=endpoint.id,
                query_template='{"query": {"match": {"title": "#$query##"}}}',
            ),
        )
        queries = query_service.add_queries(
            session=session, case=case, texts=[f"query number {n}" for n in range(count)]
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
                user = user_service.get_by_email(session=session, email=EMAIL)
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
            timed(
                f"statistics alone (t-test + {QUERIES} flips)", lambda: paired_stats(a, b), REPEAT
            )
            timed("compare data function (re-score both, stats, overlap)", data_function, REPEAT)
            timed("compare JSON route, 1 metric (server time through ASGI)", route, REPEAT)
            set_metrics(factory, case_id, SIX)
            timed("compare JSON route, 6 metrics (server time through ASGI)", route, REPEAT)

            small, small_base, small_other = build(factory, 25)
            set_metrics(factory, small, SIX[:2])
            login = client.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', login)
            assert token is not None
            client.post(
                "/login",
                data={"email": EMAIL, "password": PASSWORD, "csrf_token": token.group(1)},
            )

            def page() -> None:
                response = client.get(
                    f"/cases/{small}/compare",
                    params={"base": small_base, "other": small_other},
                )
                assert response.status_code == 200, response.status_code
                assert "P@10" in response.text

            timed("compare page, 25 queries x 3 metrics (HTML route)", page, REPEAT)


def set_metrics(factory: sessionmaker[Session], case_id: int, names: list[str]) -> None:
    """Give the case these presets as extra metrics."""
    with factory() as session:
        found = dict(
            session.execute(select(Scorer.name, Scorer.id).where(Scorer.owner_id.is_(None))).all()
        )
        case = session.get(Case, case_id)
        assert case is not None
        case.metric_scorer_ids = [found[n] for n in names]
        session.commit()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
