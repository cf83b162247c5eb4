"""What the browser tests share: Debian's Chromium, a served app, a seeded user and case.

The fixtures that use these (``browser``, ``live_app``) are in conftest.py beside this file.
Chromium comes from Debian (/usr/bin/chromium); Playwright never downloads a browser.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.queries import service as query_service
from tests.fixtures.outbound import SUITE_HOSTS

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
EMAIL, PASSWORD = "rater@example.com", "correct horse battery"
TEMPLATE = '{"query": {"multi_match": {"query": "#$query##", "fields": ["title^3", "overview"]}}}'
QUERIES = ["star wars", "batman", "the matrix"]


@dataclass(frozen=True)
class LiveApp:
    url: str
    case_id: int
    query_ids: dict[str, int]
    session_factory: sessionmaker[Session]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def seed(
    factory: sessionmaker[Session],
    index_url: str,
    *,
    email: str = EMAIL,
    name: str = "Movies",
    field_spec: str = "id:_id title:title director genre thumb:poster",
    texts: list[str] = QUERIES,
    **case_fields: Any,
) -> tuple[int, dict[str, int]]:
    """Add a user, a movies endpoint and a case with these queries; return the case's id
    and its query ids by text (other CaseCreate fields go in ``case_fields``)."""
    with session_scope(factory) as session:
        user = user_service.create_user(session=session, email=email, password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="movies", engine="opensearch", url=index_url),
        )
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name=name,
                search_endpoint_id=endpoint.id,
                query_template=TEMPLATE,
                field_spec=field_spec,
                **case_fields,
            ),
        )
        queries = query_service.add_queries(session=session, case=case, texts=texts)
        return case.id, {q.text: q.id for q in queries}


def fresh_app(tmp_path_factory: Any, name: str) -> FastAPI:
    """Return an app on its own SQLite database in a new temporary folder called ``name``."""
    data_dir = tmp_path_factory.mktemp(name)
    return create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=f"sqlite:///{data_dir}/relevo.db",
            secret_key="browser-test-secret",
        )
    )


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Serve the app with uvicorn in a background thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def login(page: Any, app: LiveApp) -> None:
    page.goto(f"{app.url}/login")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{app.url}/")
