"""How pages write numbers (pure)."""

from __future__ import annotations

import pytest

from app.web_common.templating import fmt_delta


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "\u2013"),
        (2.46, "+2.5"),
        (-0.31, "-0.3"),
        (-0.04, "0.0"),
        (0.04, "0.0"),
        (0.0, "0.0"),
        (-7.58, "-7.6"),
    ],
)
def test_a_change_is_signed_and_never_minus_zero(value: float | None, shown: str) -> None:
    assert fmt_delta(value) == shown
