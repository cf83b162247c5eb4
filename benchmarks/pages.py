"""Server time of the case page on a 5,000-query case, and of the cases list.

Builds a temporary SQLite database with a 5,000-query case, a finished run (10 docs per
query, with fields) and ratings on a third of the queries, then times the page-data
function alone and the whole route (data + template) through the ASGI app.

    python benchmarks/pages.py
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker
from timing import log_in, timed

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.pages import data as case_pages
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.models import Case, Rating, Run, RunQuery, User
from app.outbound.policy import OutboundPolicy, install_policy
from app.queries import service as query_service

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

QUERIES = 5_000
DOCS = 10
REPEAT = 5
EMAIL, PASSWORD = "bench@example.com", "benchmark password"


def build(factory: sessionmaker[Session]) -> int:
    """Create the big case with a finished run and some ratings; return its id."""
    with session_scope(factory) as session:
        user = user_service.create_user(session=session, email=EMAIL, password=PASSWORD)
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
                field_spec="id:_id title:title director genre",
            ),
        )
        queries = query_service.add_queries(
            session=session, case=case, texts=[f"query number {n}" for n in range(QUERIES)]
        )
        now = datetime.now(UTC)
        run = Run(
            case_id=case.id,
            try_number=1,
            scorer_id=case.scorer_id,
            status="finished",
            case_score=55.5,
            total=QUERIES,
            done=QUERIES,
            scored=QUERIES // 3,
            unscored=QUERIES - QUERIES // 3,
            started_at=now,
            finished_at=now,
        )
        session.add(run)
        session.flush()
        session.execute(
            insert(RunQuery),
            [
                {
                    "run_id": run.id,
                    "query_id": q.id,
                    "text": q.text,
                    "position": q.position,
                    "status": "scored" if n % 3 == 0 else "unscored",
                    "score": float(n % 100) if n % 3 == 0 else None,
                    "num_found": 1000 + n,
                    "docs": [
                        {
                            "id": f"{n}-{d}",
                            "rank": d + 1,
                            "fields": {
                                "title": f"Title {n}/{d}",
                                "director": "Someone",
                                "genre": "Drama",
                            },
                        }
                        for d in range(DOCS)
                    ],
                    "log": [],
                }
                for n, q in enumerate(queries)
            ],
        )
        session.execute(
            insert(Rating),
            [
                {"query_id": q.id, "doc_id": f"{n}-{d}", "rating": float(d + 1)}
                for n, q in enumerate(queries)
                if n % 3 == 0
                for d in range(3)
            ],
        )
        session.commit()
        return case.id


def main() -> None:
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
            case_id = build(factory)
            log_in(client, EMAIL, PASSWORD)

            def page_data(**params: object) -> None:
                with session_scope(factory) as session:
                    case = session.get(Case, case_id)
                    user = session.get(User, case.owner_id if case else 0)
                    assert case is not None and user is not None
                    case_pages.case_page(session=session, user=user, case=case, **params)  # type: ignore[arg-type]

            def route(url: str) -> Callable[[], object]:
                def get() -> None:
                    response = client.get(url)
                    assert response.status_code == 200, response.status_code

                return get

            print(f"{QUERIES} queries, {DOCS} docs each, ratings on every third query")
            timed(f"case page data, {QUERIES} queries", page_data, REPEAT)
            timed(
                f"case page data, {QUERIES} queries, sorted by score",
                lambda: page_data(sort="score", page=20),
                REPEAT,
            )
            timed(
                f"case page, {QUERIES} queries (route + template)",
                route(f"/cases/{case_id}"),
                REPEAT,
            )
            timed(
                f"case page, {QUERIES} queries, filtered and sorted by score",
                route(f"/cases/{case_id}?q=number%2012&sort=score"),
                REPEAT,
            )
            timed(
                "expanded query results (route + template)",
                route(f"/cases/{case_id}/queries/{QUERIES // 2}/results"),
                REPEAT,
            )
            timed("cases list (route + template)", route("/"), REPEAT)


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
