"""Sealed endpoint secrets on the PostgreSQL job queue: `relevo worker` processes unseal
them with the keys of their own environment (RELEVO_ENCRYPTION_KEYS)."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from app import secret_box
from app.config import Settings
from app.db import make_session_factory
from app.main import create_app
from tests.fixtures.outbound import SUITE_HOSTS
from tests.fixtures.users import ApiUser, make_api_user
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.queue import Workers, queue_db, workers
from tests.support.recording_engine import recording_engine

__all__ = ["queue_db", "workers"]  # fixtures used here

pytestmark = pytest.mark.runner

KEY = Fernet.generate_key().decode()


def _finished(api: ApiUser, case_id: int, run_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while True:
        run: dict[str, Any] = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
        if run["status"] in ("finished", "failed", "interrupted", "cancelled"):
            return run
        assert time.monotonic() < deadline, f"run still {run['status']}"
        time.sleep(0.1)


def test_workers_send_the_unsealed_secrets(
    queue_db: str, workers: Workers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = secret_box.current_keyring()
    monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", KEY)  # the workers' environment
    settings = Settings(
        trusted_engine_hosts=SUITE_HOSTS,
        data_dir=tmp_path / "app",
        database_url=queue_db,
        secret_key="queue-test-secret",
        run_queue="postgres",
        run_chunk_size=10,
        encryption_keys=(KEY,),
    )
    try:
        with recording_engine() as engine, TestClient(create_app(settings)) as client:
            factory = make_session_factory(create_engine(queue_db))
            api = make_api_user(client, factory, "a@example.com")
            made = make_endpoint(
                api, engine.index_url, headers={"X-Api-Token": "tok"}, basic_auth="u:pw"
            )
            case_id = int(make_case(api, made["id"], scorer_id=scorer_id(api, "NDCG@10"))["id"])
            add_queries(api, case_id, [f"query {n}" for n in range(12)])
            run_id = api.post(f"/api/v1/cases/{case_id}/runs").json()["id"]
            workers.start(concurrency=2)
            run = _finished(api, case_id, run_id)
            assert run["status"] == "finished" and run["errors"] == 0, run
            assert len(engine.seen) == 12
            auth = "Basic " + base64.b64encode(b"u:pw").decode()
            assert all(
                s["x-api-token"] == "tok" and s["authorization"] == auth for s in engine.seen
            )
            # A worker whose key differs refuses to start (rather than fail every query),
            # saying how to recover; the run waits for a worker with the right key.
            workers.stop_all()
            monkeypatch.setenv("RELEVO_ENCRYPTION_KEYS", Fernet.generate_key().decode())
            second_id = api.post(f"/api/v1/cases/{case_id}/runs").json()["id"]
            refused = workers.start(concurrency=2)
            assert refused.wait(timeout=60) == 2
            log = (tmp_path / f"worker-{len(workers.started) - 1}.log").read_text()
            assert "open with none of the configured encryption keys" in log
            assert "RELEVO_ENCRYPTION_KEYS" in log
            assert api.get(f"/api/v1/cases/{case_id}/runs/{second_id}").json()["status"] == (
                "queued"
            )
            assert len(engine.seen) == 12  # nothing more was sent
    finally:
        secret_box.install_keyring(previous)
