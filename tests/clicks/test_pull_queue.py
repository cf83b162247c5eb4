"""A pull on the PostgreSQL queue, done by a real `relevo worker` process."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from app.clicks.pull import PULL_TASK
from app.db import make_session_factory, session_scope
from tests.clicks.test_pull import MAPPING, WAIT_S, _event, _index, _pulled, _wait
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import make_api_user
from tests.support.api import make_endpoint
from tests.support.clicks import make_log
from tests.support.queue import Workers as Workers
from tests.support.queue import _server as _server
from tests.support.queue import queue_db as queue_db
from tests.support.queue import workers as workers

pytestmark = pytest.mark.runner


def test_a_worker_does_a_queued_pull(
    queue_db: str, workers: Workers, tmp_path: Path, movies_engine: MoviesEngine
) -> None:
    index = "ubi_events_queued"
    httpx.delete(f"{movies_engine.url}/{index}")
    assert httpx.put(f"{movies_engine.url}/{index}", json=MAPPING).status_code == 200
    _index(movies_engine, index, [_event(i) for i in range(15)])
    factory = make_session_factory(create_engine(queue_db))
    with _server(queue_db, tmp_path) as client:
        api = make_api_user(client, factory, "puller@example.com")
        endpoint = make_endpoint(api, movies_engine.index_url)
        log = make_log(api, position_base=0)
        body = {"search_endpoint_id": endpoint["id"], "events_index": index, "page_size": 10}
        url = f"/api/v1/click-logs/{log['id']}/pull"
        # No worker yet: the pull waits in the queue, a job of its own.
        queued = api.post(url, json=body)
        assert queued.status_code == 202 and queued.json()["status"] == "queued"
        # (deferred by the web process's loop just after the request commits)
        deadline = time.monotonic() + WAIT_S
        while not _jobs(factory, log["id"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _jobs(factory, log["id"]) == ["todo"]
        assert api.get(url).json()["status"] == "queued"
        assert api.post(url, json=body).status_code == 409
        workers.start(concurrency=2)
        got = _wait(api, url)
        assert got["id"] == queued.json()["id"]
        assert got["status"] == "finished", got
        assert (got["events"]["fetched"], got["events"]["stored"]) == (15, 15)
        assert got["events"]["pages"] == 2
        summary = api.get(f"/api/v1/click-logs/{log['id']}/summary").json()
        assert summary["events"] == 15
        # Pulled again on the worker: only the cursor's millisecond comes back.
        again = _pulled(api, url, body)
        assert (again["events"]["fetched"], again["events"]["stored"]) == (1, 0)


def _jobs(factory: sessionmaker[Session], log_id: int) -> list[str]:
    """The statuses of the queue's pull jobs of this click log."""
    with session_scope(factory) as session:
        statuses = session.execute(
            text(
                "SELECT status FROM procrastinate_jobs WHERE task_name = :task"
                " AND (args->>'click_log_id')::bigint = :log_id"
            ),
            {"task": PULL_TASK, "log_id": log_id},
        ).scalars()
        return [str(status) for status in statuses]
