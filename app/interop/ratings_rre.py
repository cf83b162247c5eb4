"""Reading a Rated Ranking Evaluator (RRE) ratings file into rating lines.

RRE's ratings file is one JSON object::

    {"index", "corpora_file", "id_field",
     "topics": [{"description", "query_groups": [{"name", "description",
         "queries": [{"template", "placeholders": {"$query": "fender", ...}}],
         "relevant_documents": {...}}]}]}

A query group's `relevant_documents` rate every query of the group. They come in three
shapes, all read: doc id → {"gain": 3} (RRE's examples), grade → [doc ids] (what Quepid and
Relevo export, with `queries` at the top level and `relevant_documents` on each query), and
a list of {"document_ids": [...], "gain": 3}. `relevant_documents` may sit on a topic, a
group or a query; the nearest one to the query wins for a doc. The query's text is its
`$query` placeholder; other placeholders and templates have no place in a Relevo case.

Each rating becomes a `Line` numbered in file order (the nth rating of the file), so the
ratings import stages it like a CSV line; a query with no relevant documents still becomes
a query (a QUERY_ONLY line).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from app.interop.ratings_lines import (
    IDS_KIND,
    QUERY_ONLY,
    QUERY_ONLY_MARK,
    RATING_KIND,
    Line,
    LineErrors,
    _check_ids,
    _rating,
)

__all__ = ["rre_lines"]

Loc = tuple[str | int, ...]


class _Bad(Exception):
    """A part of the file that is not in RRE's shape (its path says where)."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


def _path(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "the file"


def _grades(value: Any, loc: Loc) -> Iterator[tuple[str, Any, Loc]]:
    """Yield (doc id, grade as written, where) from `relevant_documents` of any shape."""
    if value is None:
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            where = (*loc, index)
            if not isinstance(item, dict) or not isinstance(item.get("document_ids"), list):
                raise _Bad(where, 'expected {"document_ids": [...], "gain": N}')
            for doc in item["document_ids"]:
                yield str(doc), item.get("gain"), where
        return
    if not isinstance(value, dict):
        raise _Bad(loc, "relevant_documents must be an object or a list")
    for key, item in value.items():
        where = (*loc, str(key))
        if isinstance(item, list):  # grade → [doc ids]
            for doc in item:
                yield str(doc), key, where
        elif isinstance(item, dict):  # doc id → {"gain": N}
            yield str(key), item.get("gain", item.get("rating")), where
        else:
            raise _Bad(where, 'expected a list of doc ids or {"gain": N}')


def _query_text(item: Any, loc: Loc) -> str:
    if isinstance(item, str):
        return item.strip()
    if not isinstance(item, dict):
        raise _Bad(loc, "a query must be an object with placeholders")
    placeholders = item.get("placeholders")
    text = placeholders.get("$query") if isinstance(placeholders, dict) else None
    if text is None:
        raise _Bad((*loc, "placeholders"), 'the query has no "$query" placeholder')
    return str(text).strip()


def _walk(
    node: Any, loc: Loc, inherited: dict[str, tuple[Any, Loc]]
) -> Iterator[tuple[str, Loc, dict[str, tuple[Any, Loc]]]]:
    """Yield (query text, where, doc → (grade, where)) for every query under ``node``."""
    if not isinstance(node, dict):
        raise _Bad(loc, "expected an object")
    rated = dict(inherited)
    for doc, grade, where in _grades(node.get("relevant_documents"), (*loc, "relevant_documents")):
        rated[doc] = (grade, where)
    for key in ("topics", "query_groups"):
        children = node.get(key)
        if children is None:
            continue
        if not isinstance(children, list):
            raise _Bad((*loc, key), f"{key} must be a list")
        for index, child in enumerate(children):
            yield from _walk(child, (*loc, key, index), rated)
    queries = node.get("queries")
    if queries is None:
        return
    if not isinstance(queries, list):
        raise _Bad((*loc, "queries"), "queries must be a list")
    for index, item in enumerate(queries):
        where = (*loc, "queries", index)
        own = dict(rated)
        if isinstance(item, dict):
            relevant = item.get("relevant_documents")
            for doc, grade, at in _grades(relevant, (*where, "relevant_documents")):
                own[doc] = (grade, at)
        yield _query_text(item, where), where, own


def rre_lines(stream: IO[str], low: float, high: float, errors: LineErrors) -> Iterator[Line]:
    """Yield an RRE ratings file's ratings as lines (numbered in file order); count the bad."""
    try:
        data = json.loads(stream.read())
    except json.JSONDecodeError as exc:
        errors.append((exc.lineno, f"the file is not valid JSON: {exc.msg} (column {exc.colno})"))
        return
    except (ValueError, RecursionError) as exc:
        errors.append((1, f"the file is not valid JSON: {exc}"))
        return
    if not isinstance(data, dict) or not any(
        k in data for k in ("topics", "query_groups", "queries")
    ):
        errors.append((1, 'an RRE ratings file is an object with "topics" (or "queries")'))
        return
    number = 0
    try:
        for text, where, rated in _walk(data, (), {}):
            number += 1
            problem = _check_ids(number, text, QUERY_ONLY_MARK)
            if problem:
                errors.append((number, f"{_path(where)}: {problem}"), IDS_KIND)
                continue
            if not rated:
                yield Line(number, text, QUERY_ONLY, 0.0)
            for doc, (grade, at) in rated.items():
                number += 1
                problem = _check_ids(number, text, doc)
                value, rating_problem = _rating("" if grade is None else str(grade), low, high)
                if problem:
                    errors.append((number, f"{_path(at)}: {problem}"), IDS_KIND)
                elif value is None:
                    detail = "the doc has no gain" if grade is None else rating_problem
                    errors.append((number, f"{_path(at)}: {detail}"), RATING_KIND)
                else:
                    yield Line(number, text, doc, value)
    except _Bad as exc:
        errors.append((max(number, 1), f"{_path(exc.loc)}: {exc.message}"))
