"""The suite's fixtures come in as plugins: see tests/fixtures/ and tests/engine_fixtures.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.register_assert_rewrite("tests.fixtures")

# Names tests once imported from here; new tests import them from tests.fixtures.users.
from app.sandbox import JsPool, install_pool  # noqa: E402
from tests.fixtures.users import PASSWORD, ApiUser, make_api_user  # noqa: E402

__all__ = ["PASSWORD", "ApiUser", "make_api_user"]

pytest_plugins = [
    "tests.fixtures.database",
    "tests.fixtures.outbound",
    "tests.fixtures.users",
    "tests.engine_fixtures",
]


@pytest.fixture(scope="session", autouse=True)
def _javascript_workers() -> Iterator[JsPool]:
    """The suite's JavaScript worker pool: installed for every test, closed at the end."""
    with JsPool() as pool:
        previous = install_pool(pool)
        yield pool
        install_pool(previous)
