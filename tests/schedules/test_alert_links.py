"""Alert links reach the running app: RELEVO_BASE_URL, else the address it serves on."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.cli import processes
from app.config import Settings, listen_url
from app.db import session_scope
from app.models import AlertEvent
from app.schedules import delivery
from app.schedules.ticks import evaluate_ended
from tests.fixtures.outbound import SUITE_HOSTS
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8123"),
        ("0.0.0.0", "http://127.0.0.1:8123"),
        ("::", "http://[::1]:8123"),
        ("::1", "http://[::1]:8123"),
        ("relevo.lan", "http://relevo.lan:8123"),
    ],
)
def test_the_served_address_is_written_as_a_link_reaching_it(host: str, url: str) -> None:
    assert listen_url(host, 8123) == url


def test_the_base_url_wins_over_the_served_address() -> None:
    served = Settings(listen_url="http://127.0.0.1:8123")
    assert delivery.config_from(served).base_url == "http://127.0.0.1:8123"
    public = replace(served, base_url="https://relevo.example.com")
    assert delivery.config_from(public).base_url == "https://relevo.example.com"
    assert delivery.config_from(Settings()).base_url == "http://127.0.0.1:8000"


@pytest.fixture
def served_on_8123() -> Iterator[None]:
    settings = Settings(listen_url=listen_url("127.0.0.1", 8123))
    previous = delivery.install_config(delivery.config_from(settings))
    yield
    delivery.install_config(previous)


@pytest.mark.runner
def test_a_payload_of_an_app_on_port_8123_links_to_8123(
    api: ApiUser, session_factory: sessionmaker[Session], served_on_8123: None
) -> None:
    case_id, queries = new_case(api, queries=2)
    body = {"kind": "drop", "points": 5}
    assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    with session_scope(session_factory) as db:
        add_run(db, case_id, queries, [80, 80])
        run_id = add_run(db, case_id, queries, [40, 80]).id
    (event_id,) = evaluate_ended(session_factory=session_factory, run_id=run_id)
    with session_scope(session_factory) as db:
        event = db.get(AlertEvent, event_id)
        assert event is not None
        payload = event.payload
    link = f"http://127.0.0.1:8123/cases/{case_id}"
    assert payload["case"]["url"] == link
    assert payload["text"].endswith(link)


def _captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def run(app: Any, **options: Any) -> None:
        seen["settings"] = app.state.settings
        seen["options"] = options

    def at_once(serve: Callable[[], None], cleanup: Callable[[], None]) -> None:
        serve()

    monkeypatch.setattr("uvicorn.run", run)
    monkeypatch.setattr(processes, "serve_until_stopped", at_once)
    return seen


def test_relevo_serve_hands_its_address_to_the_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _captured(monkeypatch)
    args = argparse.Namespace(host="127.0.0.1", port=8123, workers=None, concurrency=1)
    # The app it builds installs its settings' outbound policy for the process: the suite's.
    settings = Settings(data_dir=tmp_path, trusted_engine_hosts=SUITE_HOSTS)
    assert processes.cmd_serve(args, settings) == 0
    assert seen["options"]["port"] == 8123
    assert delivery.config_from(seen["settings"]).base_url == "http://127.0.0.1:8123"


def test_the_demo_hands_its_address_to_the_links(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def serve_demo(*, settings: Settings, host: str, port: int, engine_port: int) -> int:
        seen["settings"] = settings
        return 0

    monkeypatch.setattr("app.demo.run.serve_demo", serve_demo)
    args = argparse.Namespace(host="127.0.0.1", port=8123, engine_port=None)
    assert processes.cmd_demo(args, Settings(trusted_engine_hosts=SUITE_HOSTS)) == 0
    assert delivery.config_from(seen["settings"]).base_url == "http://127.0.0.1:8123"


def test_a_worker_started_by_serve_is_told_the_address() -> None:
    supervisor = processes._worker_supervisor(1, 2, "http://127.0.0.1:8123")
    assert supervisor.command[-2:] == ["--listen-url", "http://127.0.0.1:8123"]
