"""Shared fixtures: an app per database (SQLite and PostgreSQL), cleaned after every test.

Every test that takes `db_url` (directly or through `app`, `client`, `api`...) runs once on
SQLite and once on PostgreSQL. PostgreSQL comes from RELEVO_TEST_POSTGRES_URL (default: the
local server, database `test`); each test session creates and drops its own database there.
When it is unreachable the PostgreSQL half is skipped, unless RELEVO_REQUIRE_POSTGRES=1 (set by
CI), which makes it an error instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, delete, text
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.main import create_app
from app.models import Base, Scorer
from app.services import users as user_service
from tests.engine_fixtures import engine_down_url, movies_engine  # noqa: F401

PG_ADMIN_URL = os.environ.get(
    "RELEVO_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
PASSWORD = "correct horse battery"


def _postgres_database() -> Iterator[str]:
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"relevo_test_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        message = f"PostgreSQL at {PG_ADMIN_URL} is unreachable ({type(exc).__name__})"
        if os.environ.get("RELEVO_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + " and RELEVO_REQUIRE_POSTGRES=1")
        pytest.skip(message + "; start it to run the PostgreSQL half of the suite")
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty database URL, once for SQLite and once for PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'relevo.db'}"
    else:
        yield from _postgres_database()


@pytest.fixture(scope="session")
def app(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    """The app built from explicit settings on the session's database."""
    settings = Settings(
        data_dir=Path(tmp_path_factory.mktemp("data")),
        database_url=db_url,
        secret_key="test-secret-key",
    )
    return create_app(settings)


@pytest.fixture(scope="session")
def _started_client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


@pytest.fixture
def session_factory(app: FastAPI, _started_client: TestClient) -> sessionmaker[Session]:
    factory: sessionmaker[Session] = app.state.session_factory
    return factory


@pytest.fixture
def db(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session on the test database."""
    session = session_factory()
    yield session
    session.close()


@pytest.fixture
def client(
    _started_client: TestClient, session_factory: sessionmaker[Session]
) -> Iterator[TestClient]:
    """A client with no cookies or headers; every row but the presets is deleted afterwards."""
    _started_client.cookies.clear()
    yield _started_client
    _started_client.cookies.clear()
    _wipe(session_factory)


def _wipe(factory: sessionmaker[Session]) -> None:
    with factory() as session:
        for table in reversed(Base.metadata.sorted_tables):
            if table.name == Scorer.__tablename__:
                session.execute(delete(Scorer).where(Scorer.owner_id.is_not(None)))
            else:
                session.execute(table.delete())
        session.commit()


@dataclass
class ApiUser:
    """A user with an API key, and a client that sends it."""

    id: int
    email: str
    key: str
    client: TestClient

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def get(self, url: str, **kw: Any) -> Any:
        return self.client.get(url, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    def post(self, url: str, **kw: Any) -> Any:
        return self.client.post(url, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    def put(self, url: str, **kw: Any) -> Any:
        return self.client.put(url, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    def patch(self, url: str, **kw: Any) -> Any:
        return self.client.patch(url, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    def delete(self, url: str, **kw: Any) -> Any:
        return self.client.delete(url, headers={**self.headers, **kw.pop("headers", {})}, **kw)


def make_api_user(client: TestClient, factory: sessionmaker[Session], email: str) -> ApiUser:
    with factory() as session:
        user = user_service.create_user(session=session, email=email, password=PASSWORD)
        _key, clear = user_service.create_api_key(session=session, user=user, name="tests")
        return ApiUser(id=user.id, email=user.email, key=clear, client=client)


@pytest.fixture
def api(client: TestClient, session_factory: sessionmaker[Session]) -> ApiUser:
    """The first user, calling the API with a key."""
    return make_api_user(client, session_factory, "alice@example.com")


@pytest.fixture
def other_api(client: TestClient, session_factory: sessionmaker[Session]) -> ApiUser:
    """A second user, whose things the first must never see."""
    return make_api_user(client, session_factory, "bob@example.com")
