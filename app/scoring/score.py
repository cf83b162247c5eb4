"""Scores queries with a validated config: the entry points the rest of Relevo calls."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from app.sandbox.limits import Limits
from app.scoring.batch import SCORED, Scores, build_arrays, compute, needs
from app.scoring.batch import outcomes as batch_outcomes
from app.scoring.errors import ScorerConfigError
from app.scoring.js_bridge import score_javascript
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed, scored
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
) -> list[tuple[Scores, dict[int, Outcome]]]:
    """Score every query under every built-in config in one pass over shared arrays.

    Returns each config's scores over all queries, and the outcomes that replace them where
    a score left 0-100 (float noise clamped, anything else diagnosed) or the data broke.
    """
    arrays = build_arrays(queries, needs([(c.kind, p) for c, p in configs]))
    result = []
    for config, params in configs:
        found = compute(arrays, config.kind, params, config.scale)
        fixes: dict[int, Outcome] = {}
        with np.errstate(invalid="ignore"):
            outside = (found.codes == SCORED) & ~((found.scores >= 0) & (found.scores <= 100))
        for index in np.flatnonzero(outside).tolist():
            outcome = scored(float(found.scores[index]), float(found.raws[index]))
            fixes[index] = _repair(config, queries[index], outcome, None)
        for index, exc in arrays.failures.items():
            fixes[index] = _repair(config, queries[index], None, exc)
        result.append((found, fixes))
    return result


def _split(
    configs: Sequence[ScorerConfig],
    queries: list[QueryInput],
    limits: Limits | None,
    owner: object,
) -> tuple[dict[int, list[Outcome]], dict[int, tuple[Scores, dict[int, Outcome]]]]:
    """Return the outcomes of the configs scored one by one (JavaScript, invalid configs)
    and the array results of the built-ins, by the configs' indexes."""
    listed: dict[int, list[Outcome]] = {}
    builtins: list[tuple[int, ScorerConfig, dict[str, Any]]] = []
    for index, config in enumerate(configs):
        if config.kind == ScorerKind.JAVASCRIPT:
            listed[index] = score_javascript(config, queries, limits, owner)
            continue
        params = _params(config)
        if isinstance(params, Outcome):
            listed[index] = [params for _ in queries]
        else:
            builtins.append((index, config, params))
    arrays: dict[int, tuple[Scores, dict[int, Outcome]]] = {}
    if builtins:
        found = _score_builtins([(c, p) for _, c, p in builtins], queries)
        for (index, _c, _p), result in zip(builtins, found, strict=True):
            arrays[index] = result
    return listed, arrays


def score_pass(
    configs: Sequence[ScorerConfig],
    value_configs: Sequence[ScorerConfig],
    queries: Iterable[QueryInput],
    *,
    limits: Limits | None = None,
    owner: object = None,
) -> tuple[list[list[Outcome]], list[list[float | None]]]:
    """Score the queries under every config in one pass; never raises on query data.

    Returns, for each of ``configs``, one outcome per query, and for each of
    ``value_configs`` each query's score alone (None where it is not scored: what a case's
    extra metrics keep, without making an outcome per query). Every built-in is scored over
    arrays made once from the queries (app.scoring.batch); each JavaScript scorer runs on
    its own path. ``limits`` bounds a JavaScript scorer (the defaults when None) and
    ``owner`` (a user id) is whose share of the JavaScript workers it uses.
    """
    queries = queries if isinstance(queries, list) else list(queries)
    everything = [*configs, *value_configs]
    listed, arrays = _split(everything, queries, limits, owner)
    outcomes: list[list[Outcome]] = []
    for index in range(len(configs)):
        if index not in listed:
            found, fixes = arrays[index]
            listed[index] = batch_outcomes(found)
            for row, outcome in fixes.items():
                listed[index][row] = outcome
        outcomes.append(listed[index])
    values: list[list[float | None]] = []
    for index in range(len(configs), len(everything)):
        if index in listed:
            values.append([_value(o) for o in listed[index]])
            continue
        found, fixes = arrays[index]
        column: list[float | None] = [
            None if v != v else v  # NaN: not scored
            for v in np.where(found.codes == SCORED, found.scores, np.nan).tolist()
        ]
        for row, outcome in fixes.items():
            column[row] = _value(outcome)
        values.append(column)
    return outcomes, values


def score_many(
    configs: Sequence[ScorerConfig],
    queries: Iterable[QueryInput],
    *,
    limits: Limits | None = None,
    owner: object = None,
) -> list[list[Outcome]]:
    """Return, for each config, one outcome per query, in order (``score_pass``)."""
    return score_pass(configs, (), queries, limits=limits, owner=owner)[0]


def _value(outcome: Outcome) -> float | None:
    return outcome.score if outcome.status == QueryStatus.SCORED else None


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
