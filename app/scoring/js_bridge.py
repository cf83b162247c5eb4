"""Scoring's side of the JavaScript sandbox: its types turned into the sandbox's and back.

The sandbox (``javascript``, ``js_*``, ``v8``, ``prelude``, ``sandbox``) imports nothing of
scoring; this module is where scoring calls it. A ``ScorerConfig`` becomes a ``JsScorer``,
each ``QueryInput`` a ``JsQuery`` carrying its best order (``ranking.best_order``) as data,
each ``JsResult`` an ``Outcome``, and a ``JsSyntaxError`` a ``ScorerSyntaxError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from app.sandbox import javascript
from app.sandbox import pool as sandbox_pool
from app.sandbox.limits import Limits
from app.sandbox.types import JsQuery, JsResult, JsScorer, JsSyntaxError
from app.scoring.errors import ScorerSyntaxError
from app.scoring.ranking import best_order
from app.scoring.types import Outcome, QueryInput, ScorerConfig

__all__ = [
    "check_javascript",
    "js_query",
    "js_scorer",
    "outcomes_of",
    "score_javascript",
    "score_javascript_in_process",
]

_new_object = object.__new__


def js_scorer(config: ScorerConfig) -> JsScorer:
    """Return what the sandbox needs of a JavaScript config."""
    return JsScorer(config.code or "", tuple(config.scale), config.max_score, config.environment)


def _best(ratings: Mapping[str, float]) -> Sequence[tuple[str, float]]:
    try:
        return best_order(ratings)
    except TypeError:
        if all(isinstance(r, int | float) for r in ratings.values()):
            raise
        return ()  # a rating that is not a number: the sandbox refuses the query for it


def js_query(query: QueryInput) -> JsQuery:
    """Return a query as the sandbox reads it (the docs are (id, fields) pairs already)."""
    ratings = query.ratings
    return JsQuery(
        query.docs,
        ratings,
        _best(ratings),
        query.num_found,
        query.query_options,
        query.case_options,
        query.text,
    )


class _JsQueries(Sequence[JsQuery]):
    """A batch's queries seen as JsQuery values, each made when the sandbox reads it.

    Made one at a time, each one's best order is garbage by the time the next is read; a list
    of them all would keep a batch's worth of small objects alive, which wakes the garbage
    collector's full passes (a tenth of an in-process batch's time).
    """

    __slots__ = ("_queries",)

    def __init__(self, queries: Sequence[QueryInput]) -> None:
        self._queries = queries

    def __len__(self) -> int:
        return len(self._queries)

    @overload
    def __getitem__(self, index: int) -> JsQuery: ...

    @overload
    def __getitem__(self, index: slice) -> list[JsQuery]: ...

    def __getitem__(self, index: int | slice) -> JsQuery | list[JsQuery]:
        if isinstance(index, slice):
            return list(map(js_query, self._queries[index]))
        return js_query(self._queries[index])

    def __iter__(self) -> Iterator[JsQuery]:
        return map(js_query, self._queries)


def outcomes_of(results: Sequence[JsResult]) -> list[Outcome]:
    """Return the sandbox's results as outcomes, in order."""
    # One per query of a batch: filling __dict__ is twice as fast as the frozen dataclass's
    # __init__ and gives an equal object (as ``types.scored`` does).
    outcomes: list[Outcome] = []
    append = outcomes.append
    for status, score, raw_score, reason, log in results:
        outcome: Outcome = _new_object(Outcome)
        fields = outcome.__dict__
        fields["status"] = status
        fields["score"] = score
        fields["raw_score"] = raw_score
        fields["reason"] = reason
        fields["log"] = log
        append(outcome)
    return outcomes


def score_javascript(
    config: ScorerConfig,
    queries: Sequence[QueryInput],
    limits: Limits | None = None,
    owner: object = None,
) -> list[Outcome]:
    """Return a JavaScript scorer's outcomes over a batch, computed in a sandbox worker.

    ``owner`` (a user id; None for no one in particular) is whose share of the workers it uses.
    """
    scorer, listed = js_scorer(config), _JsQueries(queries)
    found = sandbox_pool.score_javascript(scorer, listed, limits, owner)
    return outcomes_of(found)


def score_javascript_in_process(
    config: ScorerConfig, queries: Sequence[QueryInput]
) -> list[Outcome]:
    """Return a batch's outcomes computed in this process: a V8 abort kills the caller."""
    found = javascript.score_in_process(js_scorer(config), _JsQueries(queries))
    return outcomes_of(found)


def check_javascript(code: str) -> None:
    """Raise ScorerSyntaxError (message, 1-based line) when the scorer's code does not parse."""
    try:
        javascript.check_javascript(code)
    except JsSyntaxError as exc:
        raise ScorerSyntaxError(exc.message, exc.line) from exc
