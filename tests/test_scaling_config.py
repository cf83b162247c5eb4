"""How runs are executed is chosen by configuration; compose runs the app and two workers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.cli import main
from app.config import Settings
from app.jobs.queue import libpq_url

ROOT = Path(__file__).resolve().parents[1]
PG = "postgresql://relevo:secret@db:5432/relevo"


def test_runs_go_to_the_queue_on_postgresql_and_stay_in_process_on_sqlite() -> None:
    assert Settings.from_env({"DATABASE_URL": PG}).run_queue == "postgres"
    assert Settings.from_env({}).run_queue == "inprocess"
    assert (
        Settings.from_env({"DATABASE_URL": PG, "RELEVO_RUN_QUEUE": "inprocess"}).uses_queue is False
    )
    settings = Settings.from_env(
        {"DATABASE_URL": PG, "RELEVO_RUN_CHUNK_SIZE": "25", "RELEVO_WORKER_STALLED_S": "12"}
    )
    assert (settings.run_chunk_size, settings.worker_stalled_s) == (25, 12)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RELEVO_RUN_QUEUE": "redis"}, "RELEVO_RUN_QUEUE must be auto, inprocess or postgres"),
        ({"RELEVO_RUN_QUEUE": "postgres"}, "needs DATABASE_URL to be a PostgreSQL URL"),
        ({"RELEVO_RUN_CHUNK_SIZE": "0"}, "RELEVO_RUN_CHUNK_SIZE must be positive"),
    ],
)
def test_bad_queue_settings_are_refused_with_a_message(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


def test_the_queue_connects_with_the_same_credentials() -> None:
    url = libpq_url("postgresql+psycopg://relevo:s%40cret@db:5432/relevo")
    assert url == "postgresql://relevo:s%40cret@db:5432/relevo"
    with pytest.raises(ValueError, match="needs PostgreSQL"):
        libpq_url("sqlite:///x.db")


def test_workers_need_postgresql(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("RELEVO_RUN_QUEUE", raising=False)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    assert main(["worker"]) == 2
    assert "relevo worker needs the PostgreSQL job queue" in capsys.readouterr().err
    assert main(["serve", "--workers", "0"]) == 2
    assert "--workers applies to PostgreSQL" in capsys.readouterr().err


def test_compose_serves_with_no_workers_and_runs_two_worker_replicas() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    app, worker = compose["services"]["app"], compose["services"]["worker"]
    assert app["command"][:2] == ["relevo", "serve"] and app["command"][-2:] == ["--workers", "0"]
    assert worker["command"][:2] == ["relevo", "worker"]
    assert worker["deploy"]["replicas"] == 2
    assert worker["environment"]["DATABASE_URL"] == app["environment"]["DATABASE_URL"]
    assert worker["depends_on"]["postgres"]["condition"] == "service_healthy"
