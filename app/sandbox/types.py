"""What the JavaScript sandbox takes and gives back: plain data of its own.

The sandbox (the engine, its isolates and the worker processes) knows nothing of Relevo's
scoring: whoever calls it turns its own scorer and queries into a ``JsScorer`` and
``JsQuery`` values, and the ``JsResult`` values back into its own (``app.scoring.js_bridge``
does it for scoring). A query brings its best order as data (rated docs, best first), which
the helpers ``bestDocs``, ``topRatings`` and ``editDistanceFromBest`` read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from app.vocabulary import QueryStatus

__all__ = ["JsQuery", "JsResult", "JsScorer", "JsSyntaxError", "js_error", "js_unscored"]

NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


class JsScorer(NamedTuple):
    """A scorer's code and what its score is scaled by."""

    code: str
    scale: tuple[float, ...]
    max_score: float = 100.0
    # "relevo" (SCORING.md) or "quepid" (what Quepid's browser computes).
    environment: str = "relevo"


class JsQuery(NamedTuple):
    """One query as a scorer sees it.

    ``docs`` are (id, fields) pairs in rank order; ``best`` is every rated doc as (id,
    rating), best first. A tuple: a batch makes one per query.
    """

    docs: Sequence[tuple[str, Mapping[str, Any]]]
    ratings: Mapping[str, float]
    best: Sequence[tuple[str, float]]
    num_found: int | None = None
    query_options: Mapping[str, Any] = NO_FIELDS
    case_options: Mapping[str, Any] = NO_FIELDS
    text: str = ""


class JsResult(NamedTuple):
    """What one query came to: a score (0-100, and the raw one), no score or an error.

    ``reason`` says why a query has no score or what went wrong; ``log`` is its console.
    """

    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    log: tuple[str, ...] = ()


def js_error(message: str, log: tuple[str, ...] = ()) -> JsResult:
    """Return the result of a query that failed, with its message."""
    return JsResult(QueryStatus.ERROR, None, None, message, log)


def js_unscored(reason: str, log: tuple[str, ...] = ()) -> JsResult:
    """Return the result of a query the scorer left without a score."""
    return JsResult(QueryStatus.UNSCORED, None, None, reason, log)


class JsSyntaxError(Exception):
    """The scorer's code does not parse; ``line`` (1-based, in the user's code) or None."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message if line is None else f"{message} (line {line})")
        self.message = message
        self.line = line
