"""Pytest fixtures for a real search engine: osmem-server loaded with the demo movies.

Loaded by ``pytest_plugins`` in tests/conftest.py.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from app.demo.corpus import index_movies, start_osmem

__all__ = ["MoviesEngine", "engine_down_url", "movies_engine"]


@dataclass(frozen=True)
class MoviesEngine:
    """A running engine with the ``movies`` index loaded."""

    url: str
    index_url: str
    count: int


@pytest.fixture(scope="session")
def movies_engine() -> Iterator[MoviesEngine]:
    """Start osmem once per session, index the demo movies, and stop it at the end."""
    server = start_osmem()
    try:
        count = index_movies(server.url, "movies")
        yield MoviesEngine(url=server.url, index_url=f"{server.url}/movies", count=count)
    finally:
        server.close()


@pytest.fixture
def engine_down_url() -> str:
    """Return a loopback URL on a port that nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The socket is closed without listen(), so connecting is refused.
    return f"http://127.0.0.1:{port}"
