"""validate_scorer: what it accepts, fills in, and rejects."""

from __future__ import annotations

from typing import Any

import pytest

from app.scoring import ScorerConfigError, ScorerSyntaxError, validate_scorer


def validate(**overrides: Any) -> Any:
    """Return validate_scorer's result for an NDCG scorer with some arguments replaced."""
    arguments: dict[str, Any] = {"kind": "ndcg", "params": None, "scale": [0, 1, 2, 3],
                                 "scale_labels": None, "code": None, "max_score": None}  # fmt: skip
    arguments.update(overrides)
    return validate_scorer(**arguments)


def test_fills_defaults() -> None:
    built = validate(params={"k": 5})
    assert dict(built.params) == {"k": 5, "gain": "linear", "ideal": "rated", "unrated": "zero"}
    assert (built.kind, built.scale, built.max_score, built.code) == (
        "ndcg",
        (0, 1, 2, 3),
        100.0,
        None,
    )


def test_labels_match_scale_values_written_either_way() -> None:
    assert validate(scale_labels={"0": "Poor", "3.0": "Perfect"}).scale == (0, 1, 2, 3)
    assert validate(scale=[0.5, 1], kind="cg", scale_labels={"0.5": "Half"}).scale == (0.5, 1)
    # "3" and "3.0" are the same value written two ways, so both cannot be given.
    with pytest.raises(ScorerConfigError, match="repeats a scale value"):
        validate(scale_labels={"3": "Perfect", "3.0": "Perfect"})


BAD: list[tuple[dict[str, Any], str]] = [
    ({"kind": "bm25"}, "kind"),
    ({"params": {"depth": 3}}, "params"),
    ({"params": {"k": 0}}, "params.k"),
    ({"params": {"k": 1001}}, "params.k"),
    ({"params": {"k": 2.5}}, "params.k"),
    ({"params": {"k": True}}, "params.k"),
    ({"params": {"gain": "log"}}, "params.gain"),
    ({"params": {"ideal": "best"}}, "params.ideal"),
    ({"params": {"unrated": "one"}}, "params.unrated"),
    ({"kind": "precision", "params": {"threshold": "1"}}, "params.threshold"),
    ({"kind": "precision", "params": {"threshold": float("nan")}}, "params.threshold"),
    ({"kind": "classic", "params": {"gain": "linear"}}, "params"),
    ({"scale": []}, "scale"),
    ({"scale": [3, 2, 1]}, "scale"),
    ({"scale": [0, 1, 1]}, "scale"),
    ({"scale": list(range(12))}, "scale"),
    ({"scale": [0, float("inf")]}, "scale"),
    ({"scale": [0, "1"]}, "scale"),
    ({"scale_labels": {"4": "Too high"}}, "scale_labels"),
    ({"scale_labels": {"x": "Not a number"}}, "scale_labels"),
    ({"scale_labels": {"1": "One", "1.0": "Again"}}, "scale_labels"),
    ({"max_score": 0}, "max_score"),
    ({"max_score": -1}, "max_score"),
    ({"kind": "javascript", "code": None}, "code"),
    ({"kind": "javascript", "code": "   "}, "code"),
    ({"kind": "javascript", "params": {"k": 10}, "code": "setScore(1)"}, "params"),
]


@pytest.mark.parametrize(("overrides", "field"), BAD)
def test_rejections_name_the_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ScorerConfigError) as info:
        validate(**overrides)
    assert info.value.field == field
    assert info.value.message


def test_javascript_syntax_error_is_a_config_error_with_a_line() -> None:
    with pytest.raises(ScorerSyntaxError) as info:
        validate(kind="javascript", code="setScore(1)\nif (", max_score=1)
    assert isinstance(info.value, ScorerConfigError)
    assert (info.value.field, info.value.line) == ("code", 2)


def test_javascript_config_keeps_code_and_max_score() -> None:
    built = validate(kind="javascript", code="setScore(1)", max_score=1)
    assert (built.kind, built.code, built.max_score, dict(built.params)) == (
        "javascript", "setScore(1)", 1.0, {},
    )  # fmt: skip
