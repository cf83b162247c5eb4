"""Scores queries with a validated config: the entry points the rest of Relevo calls."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from app.scoring.batch import SCORED, build_arrays, compute, needs
from app.scoring.batch import outcomes as batch_outcomes
from app.scoring.errors import ScorerConfigError
from app.scoring.js_limits import Limits
from app.scoring.sandbox.pool import score_javascript
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed
from app.scoring.validation import normalize_params
from app.vocabulary import QueryStatus, ScorerKind


def _diagnose(config: ScorerConfig, query: QueryInput) -> str | None:
    low, high = config.scale[0], config.scale[-1]
    for doc_id, rating in query.ratings.items():
        if not isinstance(rating, int | float) or isinstance(rating, bool):
            return f"the rating of doc {doc_id!r} is not a number"
        if not math.isfinite(rating):
            return f"the rating of doc {doc_id!r} is not a finite number"
        if not low <= rating <= high:
            return (
                f"the rating of doc {doc_id!r} ({rating:g}) is outside the scale {low:g}-{high:g}"
            )
    return None


def _repair(
    config: ScorerConfig, query: QueryInput, outcome: Outcome | None, exc: Exception | None
) -> Outcome:
    """Return the outcome of a query whose metric raised or left 0-100."""
    score = outcome.score if outcome is not None else None
    if outcome is not None and score is not None and -1e-9 <= score <= 100 + 1e-9:
        # Float noise only (e.g. a DCG equal to its ideal up to the last bit).
        return Outcome(outcome.status, min(max(score, 0.0), 100.0), outcome.raw_score, None)
    problem = _diagnose(config, query)
    if problem is not None:
        return failed(problem)
    if exc is not None:
        return failed(f"scorer failed: {type(exc).__name__}: {exc}")
    return failed(f"scorer produced {score!r}, outside 0-100")


def _params(config: ScorerConfig) -> dict[str, Any] | Outcome:
    """Return the config's complete parameters, or the error every query of it gets."""
    if not config.scale:
        return failed("invalid scorer config: the scale is empty")
    try:
        return normalize_params(config.kind, config.params, config.scale)
    except (ScorerConfigError, KeyError, IndexError, TypeError, ValueError) as exc:
        message = exc.message if isinstance(exc, ScorerConfigError) else str(exc)
        return failed(f"invalid scorer config: {message}")


def _score_builtins(
    configs: Sequence[tuple[ScorerConfig, dict[str, Any]]], queries: Sequence[QueryInput]
) -> list[list[Outcome]]:
    """Score every query under every built-in config in one pass over shared arrays."""
    arrays = build_arrays(queries, needs([(c.kind, p) for c, p in configs]))
    failures = arrays.failures
    result = []
    for config, params in configs:
        found = compute(arrays, config.kind, params, config.scale)
        listed = batch_outcomes(found)
        # Scores outside 0-100 (or NaN): float noise is clamped, anything else diagnosed.
        with np.errstate(invalid="ignore"):
            outside = (found.codes == SCORED) & ~((found.scores >= 0) & (found.scores <= 100))
        for index in np.flatnonzero(outside).tolist():
            listed[index] = _repair(config, queries[index], listed[index], None)
        for index, exc in failures.items():
            listed[index] = _repair(config, queries[index], None, exc)
        result.append(listed)
    return result


def score_many(
    configs: Sequence[ScorerConfig],
    queries: Iterable[QueryInput],
    *,
    limits: Limits | None = None,
    owner: object = None,
) -> list[list[Outcome]]:
    """Return, for each config, one outcome per query, in order; never raises on query data.

    Every built-in config is scored in one pass over arrays made once from the queries
    (app.scoring.batch); each JavaScript scorer runs on its own path. ``limits`` bounds a
    JavaScript scorer (the defaults when None) and ``owner`` (a user id) is whose share of
    the JavaScript workers it uses; built-in scorers ignore both.
    """
    listed = queries if isinstance(queries, list) else list(queries)
    result: list[list[Outcome] | None] = [None] * len(configs)
    builtins: list[tuple[int, ScorerConfig, dict[str, Any]]] = []
    for index, config in enumerate(configs):
        if config.kind == ScorerKind.JAVASCRIPT:
            result[index] = score_javascript(config, listed, limits, owner)
            continue
        params = _params(config)
        if isinstance(params, Outcome):
            result[index] = [params for _ in listed]
        else:
            builtins.append((index, config, params))
    if builtins:
        scored = _score_builtins([(c, p) for _, c, p in builtins], listed)
        for (index, _c, _p), outcomes in zip(builtins, scored, strict=True):
            result[index] = outcomes
    return [outcomes or [] for outcomes in result]


def score_queries(
    config: ScorerConfig,
    queries: Iterable[QueryInput],
    *,
    limits: Limits | None = None,
    owner: object = None,
) -> list[Outcome]:
    """Return one outcome per query, in order; never raises on query data.

    ``limits`` bounds a JavaScript scorer (the defaults when None) and ``owner`` (a user id)
    is whose share of the JavaScript workers it uses; built-in scorers ignore both.
    """
    return score_many([config], queries, limits=limits, owner=owner)[0]


def score_query(config: ScorerConfig, query: QueryInput) -> Outcome:
    """Return the outcome of one query."""
    return score_queries(config, [query])[0]


class Scored(Protocol):
    """A query's outcome as stored or computed: an Outcome, or a run's stored row."""

    @property
    def status(self) -> QueryStatus: ...

    @property
    def score(self) -> float | None: ...


@dataclass(frozen=True)
class Tally:
    """The case score of a set of query outcomes and how many had each status."""

    case_score: float | None
    scored: int
    unscored: int
    errors: int


def case_score(outcomes: Iterable[Scored]) -> float | None:
    """Return the mean score of the scored outcomes, or None when none is scored."""
    total, count = 0.0, 0
    for outcome in outcomes:
        if outcome.status == QueryStatus.SCORED and outcome.score is not None:
            total += outcome.score
            count += 1
    return total / count if count else None


def tally(outcomes: Iterable[Scored]) -> Tally:
    """Return the case score and the status counts: what a run or a comparison side shows."""
    listed = list(outcomes)
    statuses = [o.status for o in listed]
    return Tally(
        case_score=case_score(listed),
        scored=statuses.count(QueryStatus.SCORED),
        unscored=statuses.count(QueryStatus.UNSCORED),
        errors=statuses.count(QueryStatus.ERROR),
    )
