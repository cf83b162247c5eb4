"""A judge run on the PostgreSQL queue, executed by a real `relevo worker` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.main import create_app
from app.runs.queue import JUDGE_TASK
from tests.fixtures.database import _postgres_database
from tests.fixtures.outbound import SUITE_HOSTS
from tests.fixtures.users import make_api_user
from tests.judges.fake_llm import fake_llm

pytestmark = pytest.mark.runner

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url() -> Iterator[str]:
    """A PostgreSQL database of this test's own."""
    yield from _postgres_database()


def _judge_jobs(factory: sessionmaker[Session], run_id: int) -> list[str]:
    """Return the statuses of the queue's jobs for this judge run."""
    with factory() as session:
        statuses = session.scalars(
            text(
                "SELECT status FROM procrastinate_jobs"
                " WHERE task_name = :task AND (args->>'run_id')::bigint = :run_id"
            ),
            {"task": JUDGE_TASK, "run_id": run_id},
        )
        return [str(status) for status in statuses]


def test_a_worker_executes_a_queued_judge_run(db_url: str, tmp_path: Path) -> None:
    settings = Settings(
        trusted_engine_hosts=SUITE_HOSTS,
        data_dir=tmp_path,
        database_url=db_url,
        secret_key="judge-queue",
        run_queue="postgres",
    )
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "RELEVO_RUN_QUEUE": "postgres",
        "RELEVO_DATA_DIR": str(tmp_path),  # the same encryption key as the server's
        "PYTHONPATH": str(ROOT),
    }
    log = (tmp_path / "worker.log").open("wb")
    app = create_app(settings)
    with fake_llm() as llm, TestClient(app) as client:
        api = make_api_user(client, app.state.session_factory, "queue@example.com")
        judge = api.post(
            "/api/v1/judges",
            json={
                "name": "Queued",
                "provider": "anthropic",
                "base_url": llm.url,
                "model": "claude-fake",
                "api_key": "ant-queued-key",
                "requests_per_minute": 100_000,
            },
        ).json()
        book = api.post("/api/v1/books", json={"name": "B", "scale": [0, 1, 2, 3]}).json()
        pairs = [
            {"query_text": "q", "doc_id": f"d{i}", "fields": {"grade": i % 4}} for i in range(6)
        ]
        api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs})
        started = api.post(f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]})
        assert started.status_code == 202, started.text
        run_url = f"/api/v1/books/{book['id']}/judge-runs/{started.json()['id']}"
        factory = app.state.session_factory
        deadline = time.monotonic() + 20
        while not (jobs := _judge_jobs(factory, started.json()["id"])):
            assert time.monotonic() < deadline, "the server did not queue the judge run"
            time.sleep(0.05)
        assert jobs == ["todo"]  # one job, left to the workers: the server runs nothing itself
        assert api.get(run_url).json()["status"] == "queued"
        assert llm.requests == []
        command = [sys.executable, "-m", "app.cli", "worker", "--concurrency", "2"]
        worker = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while True:
                run = api.get(run_url).json()
                if run["status"] not in ("queued", "running") or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    assert run["status"] == "finished", (run, (tmp_path / "worker.log").read_text()[-2000:])
    assert (run["judged"], run["failed"]) == (6, 0)
    assert len(llm.requests) == 6
    assert {r.headers["x-api-key"] for r in llm.requests} == {"ant-queued-key"}
