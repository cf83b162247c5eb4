"""Result files of ``static`` endpoints: upload (all or nothing), and the ranked docs a run reads.

An upload streams the file line by line into ``static_results`` inside one transaction that
first removes the previous file: memory stays bounded whatever the file's size, and a file
with any bad line leaves the previous results in place (422 listing the bad lines).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, cast

from sqlalchemy import Table, delete, func, insert, select
from sqlalchemy.orm import Session

from app.errors import ImportRejected, Invalid
from app.models import SearchEndpoint, StaticResult
from app.search import adapter_for
from app.search.static import ResultFormat, ResultLine, read_results
from app.search.types import Doc, SearchResult

__all__ = ["ResultsSummary", "has_results", "results_for", "store_results"]

BATCH = 5000  # rows per INSERT: large enough to be fast, small enough to stay bounded
KEYS_PER_SELECT = 400  # query keys per SELECT (two per query: its id and its text)
MAX_PROBLEMS = 100
_TABLE = cast(Table, StaticResult.__table__)


@dataclass(frozen=True)
class ResultsSummary:
    """What an upload stored: distinct queries, result lines, and whether it replaced a file."""

    queries: int
    docs: int
    replaced: bool


def _row(endpoint_id: int, line: ResultLine) -> dict[str, Any]:
    return {
        "endpoint_id": endpoint_id,
        "query_key": line.query_key,
        "doc_id": line.doc_id,
        "score": line.score,
        "fields": line.fields,
    }


def has_results(*, session: Session, endpoint_id: int) -> bool:
    """Return True when the endpoint has an uploaded result file."""
    stmt = select(StaticResult.id).where(StaticResult.endpoint_id == endpoint_id).limit(1)
    return session.scalar(stmt) is not None


def _batches(lines: Iterator[ResultLine], endpoint_id: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for line in lines:
        batch.append(_row(endpoint_id, line))
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def store_results(
    *, session: Session, endpoint: SearchEndpoint, stream: IO[str], fmt: ResultFormat
) -> ResultsSummary:
    """Replace the endpoint's results with the file's, all or nothing; return what was stored."""
    if not adapter_for(endpoint.engine).answers_from_file:
        raise Invalid("engine", "Only a static endpoint takes a result file.")
    endpoint_id = endpoint.id
    replaced = has_results(session=session, endpoint_id=endpoint_id)
    problems: list[tuple[int, str]] = []
    docs = 0
    try:
        session.execute(delete(StaticResult).where(StaticResult.endpoint_id == endpoint_id))
        for batch in _batches(read_results(stream, fmt, problems), endpoint_id):
            if problems:
                if len(problems) >= MAX_PROBLEMS:
                    break
                continue  # nothing is written any more: only the bad lines are still wanted
            session.execute(insert(_TABLE), batch)  # Core: no ORM work per row
            docs += len(batch)
        if not problems and docs == 0:
            problems.append((1, "the file has no result lines"))
        if problems:
            raise ImportRejected(
                f"{len(problems)} bad line(s); nothing was stored.", problems[:MAX_PROBLEMS]
            )
        queries = session.scalar(
            select(func.count(func.distinct(StaticResult.query_key))).where(
                StaticResult.endpoint_id == endpoint_id
            )
        )
        session.flush()
    except BaseException:
        session.rollback()
        raise
    return ResultsSummary(queries=int(queries or 0), docs=docs, replaced=replaced)


def _ranked(session: Session, endpoint_id: int, keys: Sequence[str], rows: int) -> Any:
    doc_order = StaticResult.doc_id
    if session.get_bind().dialect.name == "postgresql":
        doc_order = doc_order.collate("C")  # type: ignore[assignment]  # strcmp order, as trec_eval
    position = (
        func.row_number()
        .over(
            partition_by=StaticResult.query_key,
            order_by=(StaticResult.score.desc(), doc_order.desc()),
        )
        .label("position")
    )
    total = func.count().over(partition_by=StaticResult.query_key).label("total")
    inner = (
        select(
            StaticResult.query_key,
            StaticResult.doc_id,
            StaticResult.fields,
            position,
            total,
        )
        .where(StaticResult.endpoint_id == endpoint_id, StaticResult.query_key.in_(list(keys)))
        .subquery()
    )
    stmt = (
        select(inner.c.query_key, inner.c.doc_id, inner.c.fields, inner.c.position, inner.c.total)
        .where(inner.c.position <= rows)
        .order_by(inner.c.query_key, inner.c.position)
    )
    return session.execute(stmt)


def results_for(
    *,
    session: Session,
    endpoint_id: int,
    queries: Sequence[tuple[int, str]],
    rows: int,
) -> dict[int, SearchResult]:
    """Return each query's top ``rows`` docs from the endpoint's result file.

    A query is found by its id (a TREC QID) first, else by its text; a query the file lacks
    gets zero results.
    """
    found: dict[str, tuple[list[Doc], int]] = {}
    keys = sorted({key for qid, text in queries for key in (str(qid), text)})
    for start in range(0, len(keys), KEYS_PER_SELECT):
        chunk = keys[start : start + KEYS_PER_SELECT]
        for key, doc_id, fields, position, total in _ranked(session, endpoint_id, chunk, rows):
            docs, _ = found.setdefault(key, ([], int(total)))
            docs.append(Doc(id=doc_id, position=int(position), fields=dict(fields or {})))
    results: dict[int, SearchResult] = {}
    for qid, text in queries:
        docs, total = found.get(str(qid)) or found.get(text) or ([], 0)
        results[qid] = SearchResult(docs=list(docs), num_found=total)
    return results
