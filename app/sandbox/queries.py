"""A JavaScript batch's queries as the prelude reads them: compact JSON, one per query.

Queries whose data cannot be encoded become errors before any JavaScript runs; ``merge``
puts them back in place among the outcomes of the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.sandbox.types import JsQuery, JsResult, JsScorer, js_error

__all__ = ["config_problem", "encode_queries", "encode_query", "merge"]


class _QueryDataError(Exception):
    """The query's data cannot be handed to JavaScript."""


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _plain(value: Any) -> Any:
    """Return value as JSON-ready data: mappings and sequences copied, non-finite floats null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)


def _default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return str(value)


def encode_query(query: JsQuery) -> str:
    """Return the query as the compact JSON array the prelude reads."""
    ratings = query.ratings
    for doc_id, rating in ratings.items():
        if not _is_finite_number(rating):
            raise _QueryDataError(f"the rating of doc {doc_id!r} is not a finite number")
    get = ratings.get
    docs = [[doc_id, get(doc_id), fields or None] for doc_id, fields in query.docs]
    total = query.num_found if query.num_found is not None else len(query.docs)
    options = {**query.case_options, **query.query_options}
    data = [docs, query.best, total, options, query.text, query.query_options]
    try:
        return json.dumps(data, allow_nan=False, default=_default, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        try:
            return json.dumps(_plain(data), allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError) as exc:
            raise _QueryDataError(
                f"the query's data cannot be passed to the scorer: {exc}"
            ) from exc


def config_problem(scorer: JsScorer) -> str | None:
    """Return why a scorer cannot score anything, or None when it can."""
    if not scorer.code:
        return "the JavaScript scorer has no code"
    if not _is_finite_number(scorer.max_score) or scorer.max_score <= 0:
        return "the scorer's max_score must be positive"
    return None


def encode_queries(queries: Sequence[JsQuery]) -> tuple[list[JsResult | None], list[str]]:
    """Return the queries' results so far (errors for unencodable data) and the encoded rest."""
    outcomes: list[JsResult | None] = [None] * len(queries)
    parts: list[str] = []
    for index, query in enumerate(queries):
        try:
            parts.append(encode_query(query))
        except _QueryDataError as exc:
            outcomes[index] = js_error(str(exc))
    return outcomes, parts


def merge(outcomes: list[JsResult | None], results: Sequence[JsResult]) -> list[JsResult]:
    """Return outcomes with its gaps filled, in order, from results."""
    rest = iter(results)
    return [outcome if outcome is not None else next(rest) for outcome in outcomes]
