"""On PostgreSQL, real `relevo worker` processes fire a case's schedule through the queue."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import make_engine, make_session_factory, session_scope
from app.models import Run, ScheduleFiring
from app.vocabulary import RunStatus
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import make_api_user
from tests.support.api import add_queries, make_case, make_endpoint
from tests.support.queue import Workers, _server, queue_db, workers

pytestmark = pytest.mark.runner
__all__ = ["queue_db", "workers"]  # fixtures this module uses from the queue tests


def _scheduled(session: Session) -> list[tuple[RunStatus, str]]:
    return [(r.status, r.trigger) for r in session.scalars(select(Run).order_by(Run.id))]


def test_two_workers_start_one_run_per_due_minute(
    queue_db: str, workers: Workers, tmp_path: Path, movies_engine: MoviesEngine
) -> None:
    engine = make_engine(queue_db)
    factory = make_session_factory(engine)
    try:
        with _server(queue_db, tmp_path) as client:  # a server that fires nothing itself
            api = make_api_user(client, factory, "ops@example.com")
            endpoint = make_endpoint(api, movies_engine.index_url)
            case = make_case(api, endpoint["id"])
            add_queries(api, case["id"], ["star wars", "batman", "alien"])
            workers.start(concurrency=2)
            workers.start(concurrency=2)
            put = api.put(f"/api/v1/cases/{case['id']}/schedule", json={"cron": "* * * * *"})
            assert put.status_code == 200
            deadline = time.monotonic() + 150
            with session_scope(factory) as session:
                while not any(s == RunStatus.FINISHED for s, _ in _scheduled(session)):
                    assert time.monotonic() < deadline, "no scheduled run finished"
                    time.sleep(0.5)
                    session.expire_all()
                runs = _scheduled(session)
                firings = list(session.scalars(select(ScheduleFiring)))
            assert {t for _, t in runs} == {"schedule"}
            assert len(runs) == len(firings) == len({f.due_at for f in firings})
            assert all(f.run_id is not None for f in firings)
    finally:
        engine.dispose()
