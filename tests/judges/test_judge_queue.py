"""A judge run on the PostgreSQL queue, executed by a real `relevo worker` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_session_factory, session_scope
from app.judges.launch import JUDGE_TASK
from app.main import create_app
from app.models import JudgeRun
from tests.fixtures.database import _postgres_database
from tests.fixtures.outbound import SUITE_HOSTS
from tests.fixtures.users import make_api_user
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.queue import Workers as Workers
from tests.support.queue import _server as _server
from tests.support.queue import queue_db as queue_db
from tests.support.queue import workers as workers
from tests.support.slow_engine import slow_engine

pytestmark = pytest.mark.runner

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url() -> Iterator[str]:
    """A PostgreSQL database of this test's own."""
    yield from _postgres_database()


def _judge_jobs(factory: sessionmaker[Session], run_id: int) -> list[str]:
    """Return the statuses of the queue's jobs for this judge run."""
    with session_scope(factory) as session:
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


def _billed(llm: FakeLLM) -> float:
    """What the fake model charged for every request it received ($1 / $2 per million)."""
    return sum((len(llm.prompt_of(r.body)) // 4 + 12 * 2) / 1_000_000 for r in llm.requests)


def test_spend_survives_kill_9_and_a_crash_loop_stays_within_budget(
    db_url: str, tmp_path: Path
) -> None:
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
        "RELEVO_DATA_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    app = create_app(settings)
    budget = 0.01
    with fake_llm() as llm, TestClient(app) as client:
        llm.delay_s = 0.2
        api = make_api_user(client, app.state.session_factory, "crash@example.com")
        judge = api.post(
            "/api/v1/judges",
            json={
                "name": "Billed",
                "provider": "openai",
                "base_url": f"{llm.url}/v1",
                "model": "gpt-fake",
                "requests_per_minute": 100_000,
                "max_concurrency": 4,
                "price_input_per_mtok": 1.0,
                "price_output_per_mtok": 2.0,
            },
        ).json()
        book = api.post("/api/v1/books", json={"name": "B", "scale": [0, 1, 2, 3]}).json()
        pairs = [{"query_text": "q", "doc_id": f"d{i}", "fields": {"n": i}} for i in range(80)]
        api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs})
        started = api.post(
            f"/api/v1/books/{book['id']}/judge-runs",
            json={"judge_id": judge["id"], "budget_usd": budget},
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["id"]
        run_url = f"/api/v1/books/{book['id']}/judge-runs/{run_id}"
        factory = app.state.session_factory
        command = [sys.executable, "-m", "app.cli", "worker", "--concurrency", "2"]
        for crash in range(3):
            log = (tmp_path / f"worker-{crash}.log").open("wb")
            worker = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
            seen = len(llm.requests)
            deadline = time.monotonic() + 60
            while len(llm.requests) < seen + 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
            time.sleep(0.5)  # the calls it had under way are answered (and billed) anyway
            with session_scope(factory) as session:
                row = session.get(JudgeRun, run_id)
                assert row is not None
                recorded = row.cost_usd + row.reserved_usd
                # Stale now, as a minute without heartbeat would make it.
                row.heartbeat_at = datetime.now(UTC) - timedelta(minutes=5)
                session.commit()
            assert recorded >= _billed(llm) - 1e-12, (crash, recorded, _billed(llm))
            assert api.post(f"{run_url}/resume").status_code == 202
        log = (tmp_path / "worker-last.log").open("wb")
        worker = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 90
            while (run := api.get(run_url).json())["status"] in ("queued", "running"):
                assert time.monotonic() < deadline, run
                time.sleep(0.2)
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    assert run["status"] == "paused" and "budget" in run["message"], run
    assert run["cost_usd"] >= _billed(llm) - 1e-9
    assert _billed(llm) <= budget


def test_one_users_judge_runs_leave_worker_slots_to_other_users_runs(
    queue_db: str, workers: Workers, tmp_path: Path
) -> None:
    with (
        fake_llm() as llm,
        slow_engine(delay_s=0.01) as engine,
        _server(queue_db, tmp_path) as client,
    ):
        llm.gate = threading.Event()  # a model that answers nothing until the end
        factory = make_session_factory(create_engine(queue_db))
        alice = make_api_user(client, factory, "judging@example.com")
        bob = make_api_user(client, factory, "cases@example.com")
        book = alice.post("/api/v1/books", json={"name": "B", "scale": [0, 1, 2, 3]}).json()
        pair = {"query_text": "q", "doc_id": "d0", "fields": {"grade": 2}}
        alice.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": [pair]})
        judge_runs = []
        for n in range(8):  # eight judges, so eight runs under way at once
            judge = alice.post(
                "/api/v1/judges",
                json={
                    "name": f"Slow {n}",
                    "provider": "openai",
                    "base_url": f"{llm.url}/v1",
                    "model": f"slow-{n}",
                    "max_concurrency": 1,
                    "timeout_s": 120,
                    "requests_per_minute": 100_000,
                },
            ).json()
            started = alice.post(
                f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]}
            )
            assert started.status_code == 202, started.text
            judge_runs.append(started.json()["id"])
        endpoint = make_endpoint(bob, engine.index_url, timeout_s=30)
        case_id = int(make_case(bob, endpoint["id"], scorer_id=scorer_id(bob, "NDCG@10"))["id"])
        add_queries(bob, case_id, [f"query {n}" for n in range(5)])
        case_run = bob.post(f"/api/v1/cases/{case_id}/runs").json()["id"]
        workers.start(concurrency=2)
        try:
            deadline = time.monotonic() + 60
            while (run := bob.get(f"/api/v1/cases/{case_id}/runs/{case_run}").json())[
                "status"
            ] not in ("finished", "failed", "cancelled"):
                assert time.monotonic() < deadline, "Bob's case run waited behind Alice's judges"
                time.sleep(0.1)
            assert run["status"] == "finished"
            # While it ran, Alice's model answered nothing, and only one of her runs (the
            # worker's judge share of its two slots) had asked it anything.
            assert not llm.gate.is_set()
            assert len(llm.requests) <= 1
            with session_scope(factory) as session:
                executing = session.scalar(
                    select(func.count())
                    .select_from(JudgeRun)
                    .where(JudgeRun.user_id == alice.id, JudgeRun.status == "running")
                )
            assert executing is not None and executing <= 1
        finally:
            llm.gate.set()
        deadline = time.monotonic() + 120
        for run_id in judge_runs:
            url = f"/api/v1/books/{book['id']}/judge-runs/{run_id}"
            while (judged := alice.get(url).json())["status"] in ("queued", "running"):
                assert time.monotonic() < deadline, judged
                time.sleep(0.2)
            assert judged["status"] == "finished", judged
    assert len(llm.requests) == 8  # each run asked once, after its turn came
