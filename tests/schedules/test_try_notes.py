"""The automatic annotation of a new try says what changed, compactly (pure)."""

from __future__ import annotations

from app.cases.notes import describe_try
from app.models import Try


def _try(number: int, knobs: dict[str, float], template: str = "q=#$query##") -> Try:
    return Try(
        number=number,
        search_endpoint_id=1,
        query_template=template,
        knobs=knobs,
        field_spec="id:id title:title",
        rows=10,
    )


def test_knob_values_are_written_compactly() -> None:
    before = _try(1, {"boost": 10.0, "huge": 1e308, "size": 123_456_789.0, "w": 0.125})
    after = _try(2, {"boost": 2.5, "huge": 1.0, "size": 1e9, "w": 0.25})
    assert describe_try(before, after) == (
        "Try 2: boost 10 → 2.5; huge 1e+308 → 1; size 123456789 → 1000000000; w 0.125 → 0.25"
    )


def test_only_what_changed_is_named() -> None:
    assert describe_try(_try(1, {"k": 1.0}), _try(2, {"k": 1.0})) == (
        "Try 2: no change in the settings"
    )
    assert describe_try(_try(1, {}), _try(3, {}, template="q=#$query##&x=1")) == (
        "Try 3: query template changed"
    )
