"""Shared test helpers (moved from tests/runs/test_run_queue.py, which uses them too)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.fixtures.database import _postgres_database
from tests.fixtures.outbound import SUITE_HOSTS

ROOT = Path(__file__).resolve().parents[2]


STALLED_S = 2  # a killed worker's chunks go back to the queue after this


@pytest.fixture
def queue_db() -> Iterator[str]:
    """A PostgreSQL database of this test's own."""
    yield from _postgres_database()


def _settings(db_url: str, data_dir: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "database_url": db_url,
        "secret_key": "queue-test-secret",
        "run_queue": "postgres",
        "run_chunk_size": 10,
        "worker_stalled_s": STALLED_S,
        **extra,
    }
    return Settings(trusted_engine_hosts=SUITE_HOSTS, **values)


@contextmanager
def _server(db_url: str, data_dir: Path, **extra: Any) -> Iterator[TestClient]:
    with TestClient(create_app(_settings(db_url, data_dir, **extra))) as client:
        yield client


class Workers:
    """Starts `relevo worker` processes on the test's database and stops them at the end."""

    def __init__(self, db_url: str, logs: Path) -> None:
        self.db_url = db_url
        self.logs = logs
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, concurrency: int = 4) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "DATABASE_URL": self.db_url,
            "RELEVO_RUN_QUEUE": "postgres",
            "RELEVO_RUN_CHUNK_SIZE": "10",
            "RELEVO_WORKER_STALLED_S": str(STALLED_S),
            "PYTHONPATH": str(ROOT),
        }
        log = (self.logs / f"worker-{len(self.started)}.log").open("wb")
        command = [sys.executable, "-m", "app.cli", "worker", "--concurrency", str(concurrency)]
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def workers(queue_db: str, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(queue_db, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()
