"""`relevo demo` listens on stable ports and refuses, changing nothing, when one is taken;
it allows its own engine, and no other private address."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli import build_parser, main
from app.config import Settings
from app.demo.run import DEMO_ENGINE_PORT, serve_demo, taken_ports
from app.demo.setup import DemoInfo
from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination, current_policy
from app.secret_box import installed as installed_keys


@pytest.fixture
def busy_port() -> Iterator[int]:
    """Yield a port that a socket listens on, as a running demo would."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_taken_ports_reports_only_ports_in_use(busy_port: int) -> None:
    free = _free_port()
    assert taken_ports([("127.0.0.1", busy_port), ("127.0.0.1", free)]) == [
        ("127.0.0.1", busy_port)
    ]


def test_the_engine_port_has_a_fixed_default_and_can_be_chosen() -> None:
    parser = build_parser()
    assert parser.parse_args(["demo"]).engine_port is None  # the CLI then uses the constant
    assert DEMO_ENGINE_PORT == 9250
    args = parser.parse_args(["demo", "--port", "8001", "--engine-port", "9251"])
    assert (args.port, args.engine_port) == (8001, 9251)


@pytest.mark.parametrize("which", ["app", "engine"])
def test_a_second_demo_says_the_port_is_taken_and_changes_nothing(
    which: str,
    busy_port: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path / "data"))
    ports = {"app": _free_port(), "engine": _free_port()} | {which: busy_port}
    code = main(["demo", "--port", str(ports["app"]), "--engine-port", str(ports["engine"])])
    assert code == 1
    err = capsys.readouterr().err
    assert f"127.0.0.1:{busy_port}" in err and "Port taken" in err
    assert not (tmp_path / "data").exists()  # no database was created or migrated


def test_the_readme_gives_the_demo_credentials_and_ports() -> None:
    from app.demo.setup import DEMO_EMAIL, DEMO_PASSWORD

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert DEMO_EMAIL in readme and DEMO_PASSWORD in readme
    assert f"--engine-port {DEMO_ENGINE_PORT}" in readme and "make run PORT=8001" in readme


def _allows(policy: OutboundPolicy, url: str) -> bool:
    try:
        asyncio.run(check_destination(policy, httpx.URL(url), url))
    except Unreachable:
        return False
    return True


@dataclass
class _FakeEngine:
    url: str

    def close(self) -> None:
        return None


def test_the_demo_allows_its_own_engine_and_nothing_else_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine_port, other_port = _free_port(), _free_port()
    seen: dict[str, Any] = {}

    def prepare(**kwargs: Any) -> DemoInfo:
        seen["policy"] = current_policy()  # the demo case is run before the app starts
        return DemoInfo(case_id=1, created=False)

    def serve_app(app: Any, **kwargs: Any) -> None:
        seen["settings"] = app.state.settings

    monkeypatch.setattr("app.demo.run.start_osmem", lambda addr: _FakeEngine(f"http://{addr}"))
    monkeypatch.setattr("app.demo.run.index_movies", lambda url, index: 0)
    monkeypatch.setattr("app.demo.run.prepare_demo", prepare)
    monkeypatch.setattr("uvicorn.run", serve_app)
    # The demo installs its policy and (through create_app) its key ring: both go back after.
    monkeypatch.setattr("app.outbound.policy._installed", current_policy())
    monkeypatch.setattr("app.secret_box.installed.ring", installed_keys.ring)
    settings = Settings(data_dir=tmp_path, secret_key="demo-test")  # the defaults
    code = serve_demo(
        settings=settings, host="127.0.0.1", port=_free_port(), engine_port=engine_port
    )
    assert code == 0
    installed = current_policy()
    assert seen["settings"].trusted_engine_hosts == (f"127.0.0.1:{engine_port}",)
    assert seen["settings"].block_private_addresses is True
    for policy in (seen["policy"], installed):
        assert policy.block_private is True
        assert _allows(policy, f"http://127.0.0.1:{engine_port}/movies")
        assert not _allows(policy, f"http://127.0.0.1:{other_port}/movies")
        assert not _allows(policy, "http://169.254.169.254/")
        assert _allows(policy, "http://93.184.216.34/")  # public hosts stay allowed
