"""Checks a scorer definition and fills in the defaults of its parameters."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from app.scoring.errors import ScorerConfigError
from app.scoring.js_bridge import check_javascript
from app.scoring.ranking import DEFAULT_K, MAX_K, smallest_positive
from app.scoring.types import ScorerConfig
from app.vocabulary import ScorerKind

MAX_SCALE_VALUES = 11

_CHOICES: dict[str, tuple[str, ...]] = {
    "gain": ("linear", "exponential"),
    "ideal": ("rated", "results", "max"),
    "unrated": ("zero", "skip"),
}

# Parameters each kind accepts, with their defaults (None: computed from the scale).
_PARAMS: dict[str, dict[str, Any]] = {
    ScorerKind.CLASSIC: {"k": DEFAULT_K},
    ScorerKind.NDCG: {"k": DEFAULT_K, "gain": "linear", "ideal": "rated", "unrated": "zero"},
    ScorerKind.DCG: {"k": DEFAULT_K, "gain": "exponential"},
    ScorerKind.CG: {"k": DEFAULT_K},
    ScorerKind.PRECISION: {"k": DEFAULT_K, "threshold": None},
    ScorerKind.AVERAGE_PRECISION: {"k": DEFAULT_K, "threshold": None},
    ScorerKind.RECIPROCAL_RANK: {"k": DEFAULT_K, "threshold": None},
    ScorerKind.ERR: {"k": DEFAULT_K},
    ScorerKind.JAVASCRIPT: {},
}

KINDS: tuple[str, ...] = tuple(str(kind) for kind in _PARAMS)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_param(name: str, value: object) -> None:
    if name == "k":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_K:
            raise ScorerConfigError("params.k", f"must be a whole number from 1 to {MAX_K}")
    elif name == "threshold":
        if not _is_number(value) or not math.isfinite(value):
            raise ScorerConfigError("params.threshold", "must be a finite number")
    elif value not in _CHOICES[name]:
        allowed = ", ".join(_CHOICES[name])
        raise ScorerConfigError(f"params.{name}", f"must be one of {allowed}")


def normalize_params(
    kind: str, params: Mapping[str, Any] | None, scale: Sequence[float]
) -> dict[str, Any]:
    """Return the kind's complete parameters: the given ones checked, the rest defaulted."""
    if kind not in _PARAMS:
        raise ScorerConfigError("kind", f"unknown scorer kind {kind!r}; use one of {KINDS}")
    given = dict(params or {})
    defaults = _PARAMS[kind]
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        accepted = ", ".join(defaults) or "none"
        raise ScorerConfigError(
            "params", f"unknown parameter {unknown[0]!r} (accepted: {accepted})"
        )
    result: dict[str, Any] = {}
    for name, default in defaults.items():
        if name in given:
            _check_param(name, given[name])
            result[name] = given[name]
        else:
            result[name] = smallest_positive(scale) if default is None else default
    return result


def normalize_scale(scale: Sequence[float], kind: str) -> tuple[float, ...]:
    """Return the scale as a tuple after checking it is a short ascending list of numbers."""
    if isinstance(scale, str | bytes) or not isinstance(scale, Sequence):
        raise ScorerConfigError("scale", "must be a list of numbers")
    values = tuple(scale)
    if not values:
        raise ScorerConfigError("scale", "must not be empty")
    if len(values) > MAX_SCALE_VALUES:
        raise ScorerConfigError("scale", f"may have at most {MAX_SCALE_VALUES} values")
    if not all(_is_number(v) and math.isfinite(v) for v in values):
        raise ScorerConfigError("scale", "must contain finite numbers only")
    if len(set(values)) != len(values):
        raise ScorerConfigError("scale", "values must be unique")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ScorerConfigError("scale", "values must be in ascending order")
    if kind != ScorerKind.JAVASCRIPT and values[-1] <= 0:
        raise ScorerConfigError("scale", "the largest value must be positive")
    return values


def check_labels(labels: Mapping[str, str] | None, scale: Sequence[float]) -> None:
    """Check that every label is text keyed by a scale value written as a string."""
    if labels is None:
        return
    if not isinstance(labels, Mapping):
        raise ScorerConfigError("scale_labels", "must map scale values to labels")
    seen: set[float] = set()
    for key, label in labels.items():
        try:
            value = float(key)
        except (TypeError, ValueError):
            value = math.nan
        if not isinstance(key, str) or value not in scale:
            raise ScorerConfigError("scale_labels", f"{key!r} is not a value of the scale")
        if value in seen:
            raise ScorerConfigError("scale_labels", f"{key!r} repeats a scale value")
        if not isinstance(label, str):
            raise ScorerConfigError("scale_labels", f"the label of {key!r} must be text")
        seen.add(value)


# What a JavaScript scorer's code runs in; the first is the default.
ENVIRONMENTS = ("relevo", "quepid")


def validate_scorer(
    *,
    kind: str,
    params: Mapping[str, Any] | None,
    scale: Sequence[float],
    scale_labels: Mapping[str, str] | None,
    code: str | None,
    max_score: float | None,
    environment: str | None = None,
) -> ScorerConfig:
    """Return a ready-to-use config, or raise ScorerConfigError naming the bad field."""
    values = normalize_scale(scale, kind if isinstance(kind, str) else "")
    full = normalize_params(kind, params, values)
    check_labels(scale_labels, values)
    if max_score is None:
        max_score = 100.0
    elif not _is_number(max_score) or not math.isfinite(max_score) or max_score <= 0:
        raise ScorerConfigError("max_score", "must be a positive number")
    env = environment or ENVIRONMENTS[0]
    if env not in ENVIRONMENTS:
        raise ScorerConfigError("environment", f"must be one of {', '.join(ENVIRONMENTS)}")
    if kind != ScorerKind.JAVASCRIPT:
        if env != ENVIRONMENTS[0]:
            raise ScorerConfigError("environment", "only JavaScript scorers have an environment")
        # Built-ins have no code; whatever was sent along is dropped rather than stored.
        return ScorerConfig(kind, values, full, None, float(max_score))
    if not isinstance(code, str) or not code.strip():
        raise ScorerConfigError("code", "a JavaScript scorer needs code")
    check_javascript(code)
    return ScorerConfig(kind, values, full, code, float(max_score), env)
