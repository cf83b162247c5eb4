"""A run's stored outcomes as a comparison reads them (ranked ids, and whole docs where
needed), and the queries' text, options and weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, func, literal_column, select
from sqlalchemy.orm import Session

from app.models import Query, RunQuery
from app.vocabulary import QueryStatus

__all__ = ["QueryInfo", "StoredRow", "docs_of", "query_infos", "stored_rows", "top_docs"]


@dataclass(frozen=True, slots=True)
class StoredRow:
    """The columns of one stored query outcome that a comparison reads."""

    query_id: int
    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    error: str | None
    num_found: int | None
    ids: list[str]  # the ranked doc ids
    docs: list[Any] | None = None  # the stored docs with their fields, when loaded


_COLUMNS = (
    RunQuery.query_id,
    RunQuery.status,
    RunQuery.score,
    RunQuery.raw_score,
    RunQuery.reason,
    RunQuery.error,
    RunQuery.num_found,
)
# The ranked ids of a row's docs, extracted by the database: a comparison of two large runs
# reads ids for every query but whole docs (fields) only where the top k changed.
_SQLITE_IDS = literal_column(
    "(SELECT json_group_array(json_extract(value, '$.id')) FROM json_each(run_queries.docs))",
    type_=JSON,
)
_POSTGRES_IDS = func.jsonb_path_query_array(RunQuery.docs, literal_column("'$[*].id'"), type_=JSON)
IN_CHUNK = 5000


def stored_rows(
    session: Session, run_id: int, query_id: int | None = None, *, docs: bool = True
) -> dict[int, StoredRow]:
    """Return the run's stored outcomes by query id (one query's when query_id is given).

    ``docs=False`` reads the ranked ids only; ``docs_of`` reads whole docs where needed.
    """
    postgres = session.get_bind().dialect.name == "postgresql"
    ids = _POSTGRES_IDS if postgres else _SQLITE_IDS
    column = RunQuery.docs if docs else ids
    stmt = select(*_COLUMNS, column).where(
        RunQuery.run_id == run_id, RunQuery.query_id.is_not(None)
    )
    if query_id is not None:
        stmt = stmt.where(RunQuery.query_id == query_id)
    # A row whose query was deleted since has no id to match on, and no ratings left.
    if docs:
        return {
            row[0]: _stored_row(row, [d["id"] for d in row[7]], row[7])
            for row in session.execute(stmt)
        }
    return {row[0]: _stored_row(row, list(row[7] or ()), None) for row in session.execute(stmt)}


def _stored_row(row: Any, ids: list[str], docs: list[Any] | None) -> StoredRow:
    return StoredRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], ids, docs)


def docs_of(
    session: Session, run_id: int, rows: Mapping[int, StoredRow], query_ids: Sequence[int]
) -> dict[int, list[Any]]:
    """Return the stored docs of these queries of the run (read only when not loaded yet)."""
    found = {q: rows[q].docs for q in query_ids if q in rows and rows[q].docs is not None}
    missing = [q for q in query_ids if q in rows and q not in found]
    for start in range(0, len(missing), IN_CHUNK):
        chunk = missing[start : start + IN_CHUNK]
        stmt = select(RunQuery.query_id, RunQuery.docs).where(
            RunQuery.run_id == run_id, RunQuery.query_id.in_(chunk)
        )
        found.update({qid: docs for qid, docs in session.execute(stmt) if qid is not None})
    return {q: d for q, d in found.items() if d is not None}


def top_docs(row: StoredRow | None, k: int) -> dict[str, Mapping[str, Any]]:
    """Return the row's first k docs by id, best first, each with its rank."""
    if row is None or row.docs is None:
        return {}
    top = [{**doc, "rank": doc.get("rank") or i} for i, doc in enumerate(row.docs[:k], 1)]
    return {str(doc.get("id")): doc for doc in top}


@dataclass(frozen=True)
class QueryInfo:
    """What a comparison reads of a query: its text, position, options and weight."""

    text: str
    position: int
    options: Mapping[str, Any]
    weight: float = 1.0


def query_infos(session: Session, query_ids: Sequence[int]) -> dict[int, QueryInfo]:
    """Return the queries' infos by id (deleted queries are left out)."""
    if not query_ids:
        return {}
    stmt = select(Query.id, Query.text, Query.position, Query.options, Query.weight).where(
        Query.id.in_(query_ids)
    )
    return {
        qid: QueryInfo(
            text=text,
            position=position,
            options=options or {},
            weight=float(weight) if weight is not None else 1.0,
        )
        for qid, text, position, options, weight in session.execute(stmt)
    }
