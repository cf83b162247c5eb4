"""`relevo demo` listens on stable ports and refuses, changing nothing, when one is taken."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.demo.run import DEMO_ENGINE_PORT, taken_ports


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
