"""The suite's fixtures come in as plugins: see tests/fixtures/ and tests/engine_fixtures.py."""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.fixtures")

# Names tests once imported from here; new tests import them from tests.fixtures.users.
from tests.fixtures.users import PASSWORD, ApiUser, make_api_user  # noqa: E402

__all__ = ["PASSWORD", "ApiUser", "make_api_user"]

pytest_plugins = ["tests.fixtures.database", "tests.fixtures.users", "tests.engine_fixtures"]
