"""Shared data of the scoring tests: SCORING.md's worked examples."""

from __future__ import annotations

import pytest

from app.scoring import QueryInput
from tests.scoring.helpers import query


@pytest.fixture
def data_x() -> QueryInput:
    """Return SCORING.md's data X."""
    return query("abcde", {"a": 2, "c": 3, "d": 0, "e": 1, "x": 3})


@pytest.fixture
def data_y() -> QueryInput:
    """Return SCORING.md's data Y."""
    return query("abcde", {"a": 8, "c": 10, "d": 6, "x": 9})
