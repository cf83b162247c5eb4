"""An agent's world: a database of its own (SQLite, then PostgreSQL) with the demo case on
the embedded engine, and API keys with different scopes, for `relevo mcp` subprocesses and
an app on a real port."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as users
from app.cli.database import session_factory as open_database
from app.config import Settings
from app.db import session_scope
from app.demo.setup import DEMO_EMAIL, prepare_demo
from app.main import create_app
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.outbound import SUITE_HOSTS

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["AgentWorld", "LiveApp"]


@dataclass
class AgentWorld:
    """The demo case and keys by name: claude (read run write), reader (read),
    judge (read judge)."""

    settings: Settings
    factory: sessionmaker[Session]
    case_id: int
    keys: dict[str, str]

    def env(self, key: str) -> dict[str, str]:
        """The environment of a `relevo mcp` acting with this key on this database."""
        return {
            "DATABASE_URL": self.settings.resolved_database_url,
            "RELEVO_DATA_DIR": str(self.settings.data_dir),
            "RELEVO_SECRET_KEY": "agent-test-secret",
            "RELEVO_ALLOWED_ENGINE_HOSTS": ",".join(SUITE_HOSTS),
            "RELEVO_API_KEY": key,
        }

    @property
    def command(self) -> tuple[str, list[str], str]:
        return sys.executable, ["-m", "app.cli", "mcp"], str(ROOT)


@pytest.fixture
def agent_world(tmp_path: Path, empty_db_url: str, movies_engine: MoviesEngine) -> AgentWorld:
    """The world of one test, once on SQLite and once on PostgreSQL."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=empty_db_url,
        secret_key="agent-test-secret",
        trusted_engine_hosts=SUITE_HOSTS,
    )
    factory = open_database(settings)
    info = prepare_demo(session_factory=factory, engine_url=movies_engine.url)
    keys = {}
    with session_scope(factory) as session:
        user = users.get_by_email(session=session, email=DEMO_EMAIL)
        assert user is not None
        for name, scopes in (
            ("claude", ["read", "run", "write"]),
            ("reader", ["read"]),
            ("judge", ["read", "judge"]),
        ):
            keys[name] = users.create_api_key(session=session, user=user, name=name, scopes=scopes)[
                1
            ]
    return AgentWorld(settings=settings, factory=factory, case_id=info.case_id, keys=keys)


@dataclass
class LiveApp:
    url: str


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def live_app(agent_world: AgentWorld) -> Iterator[LiveApp]:
    """The app serving the agent's database on a free port, in a thread."""
    port = _free_port()
    config = uvicorn.Config(
        create_app(agent_world.settings), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    try:
        yield LiveApp(url=f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
