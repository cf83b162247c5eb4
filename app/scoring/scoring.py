"""Scores queries with a validated config: the entry points the rest of Relevo calls."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.scoring.errors import ScorerConfigError
from app.scoring.js_limits import Limits
from app.scoring.metrics import GRADED_KINDS, METRICS, Metric, without_negative_gain
from app.scoring.sandbox.pool import score_javascript
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed
from app.scoring.validation import normalize_params
from app.vocabulary import QueryStatus, ScorerKind


def _prepare(config: ScorerConfig) -> Metric:
    params = normalize_params(config.kind, config.params, config.scale)
    metric = METRICS[config.kind](params, config.scale[-1])
    if config.scale[0] < 0 and config.kind in GRADED_KINDS:
        return without_negative_gain(metric)
    return metric


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


def _score_builtin(config: ScorerConfig, queries: Iterable[QueryInput]) -> list[Outcome]:
    try:
        metric = _prepare(config)
    except (ScorerConfigError, KeyError, IndexError, TypeError, ValueError) as exc:
        message = exc.message if isinstance(exc, ScorerConfigError) else str(exc)
        return [failed(f"invalid scorer config: {message}") for _ in queries]
    # Each query is scored as soon as it is made: its docs and ratings are still in the CPU's
    # cache, which makes a large pass about a fifth faster than making every input first.
    kept: list[QueryInput] = []
    keep = kept.append
    outcomes: list[Outcome] = []
    add = outcomes.append
    rest = iter(queries)
    for query in rest:
        keep(query)
        try:
            add(metric(query))
        except Exception:  # redo one by one so that only the bad queries become errors
            kept.extend(rest)
            return _score_each(config, metric, kept)
    for index in [i for i, o in enumerate(outcomes) if not 0.0 <= (o.score or 0.0) <= 100.0]:
        outcomes[index] = _repair(config, kept[index], outcomes[index], None)
    return outcomes


def _score_each(
    config: ScorerConfig, metric: Metric, queries: Sequence[QueryInput]
) -> list[Outcome]:
    outcomes = []
    for query in queries:
        try:
            outcome = metric(query)
        except Exception as exc:  # a query's bad data must not stop the batch
            outcome = _repair(config, query, None, exc)
        else:
            score = outcome.score
            if score is not None and not 0.0 <= score <= 100.0:
                outcome = _repair(config, query, outcome, None)
        outcomes.append(outcome)
    return outcomes


def score_queries(
    config: ScorerConfig,
    queries: Iterable[QueryInput],
    *,
    limits: Limits | None = None,
    owner: object = None,
) -> list[Outcome]:
    """Return one outcome per query, in order; never raises on query data.

    ``queries`` may be a generator: built-in scorers then score each input as it is made.

    ``limits`` bounds a JavaScript scorer (the defaults when None) and ``owner`` (a user id)
    is whose share of the JavaScript workers it uses; built-in scorers ignore both.
    """
    if config.kind == ScorerKind.JAVASCRIPT:
        return score_javascript(config, list(queries), limits, owner)
    if not config.scale:
        return [failed("invalid scorer config: the scale is empty") for _ in queries]
    return _score_builtin(config, queries)


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
