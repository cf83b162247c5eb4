"""Ratings out of a case (CSV, TREC qrels, RRE and Quepid JSON) and runs as TREC runs.

Every export is a generator of text read from the database in batches, so a case of any
size streams. Imports live in app.interop.ratings_import (re-exported here).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.interop.ratings_import import (
    ImportFormat,
    ImportRejected,
    ImportSummary,
    import_ratings,
)
from app.interop.ratings_lines import CSV_HEADER, trec_doc_id
from app.models import Case, Query, Rating, Run, RunQuery
from app.search.fieldspec import parse_field_spec

__all__ = [
    "ImportFormat",
    "ImportRejected",
    "ImportSummary",
    "export_csv",
    "export_quepid",
    "export_rre",
    "export_trec",
    "import_ratings",
    "run_as_trec",
]

READ_BATCH = 5000


# ---------------------------------------------------------------------------- export


def _number(value: float) -> str:
    # trec_eval tools read grades with int(): whole numbers go out as 3, not 3.0.
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _rated(session: Session, case: Case) -> Iterator[tuple[int, str, str, float]]:
    """Yield (query id, query text, doc id, rating) in query then doc order, streamed."""
    stmt = (
        select(Query.id, Query.text, Rating.doc_id, Rating.rating)
        .join(Rating, Rating.query_id == Query.id)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id, Rating.doc_id)
        .execution_options(yield_per=READ_BATCH)
    )
    for row in session.execute(stmt):
        yield row[0], row[1], row[2], row[3]


def export_csv(session: Session, case: Case) -> Iterator[str]:
    """Yield the case's ratings as CSV (`query,docid,rating`, RFC 4180 quoting)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for _query_id, text, doc_id, rating in _rated(session, case):
        writer.writerow((text, doc_id, _number(rating)))
        if buffer.tell() > 64 * 1024:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def export_trec(session: Session, case: Case) -> Iterator[str]:
    """Yield the case's ratings as TREC qrels: `QID 0 DOCID RATING`, QID the query's id."""
    for query_id, _text, doc_id, rating in _rated(session, case):
        yield f"{query_id} 0 {trec_doc_id(doc_id)} {_number(rating)}\n"


def _grouped(session: Session, case: Case) -> Iterator[tuple[str, list[tuple[str, float]]]]:
    """Yield every query (rated or not) with its ratings, in query order, one at a time."""
    queries = session.execute(
        select(Query.id, Query.text)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id)
    ).all()
    rated = _rated(session, case)
    pending = next(rated, None)
    for query_id, text in queries:
        ratings: list[tuple[str, float]] = []
        while pending is not None and pending[0] == query_id:
            ratings.append((pending[2], pending[3]))
            pending = next(rated, None)
        yield text, ratings


def _json_object(head: dict[str, Any], key: str, items: Iterator[Any]) -> Iterator[str]:
    """Yield ``head`` as a JSON object whose last key ``key`` holds ``items`` as an array."""
    opening = json.dumps(head, ensure_ascii=False)[:-1]
    yield (opening + ", " if head else opening) + json.dumps(key) + ": ["
    for n, item in enumerate(items):
        yield (", " if n else "") + json.dumps(item, ensure_ascii=False)
    yield "]}"


def export_rre(session: Session, case: Case) -> Iterator[str]:
    """Yield the ratings as Rated Ranking Evaluator judgements (the shape Quepid exports)."""
    spec = case_service.current_try(session=session, case=case).field_spec
    head = {"id_field": parse_field_spec(spec).id_field, "index": case.name}
    head["template"] = "template.json"
    items = (
        {
            "placeholders": {"$query": text},
            "relevant_documents": {
                _number(grade): [d for d, r in ratings if r == grade]
                for grade in sorted({r for _d, r in ratings})
            },
        }
        for text, ratings in _grouped(session, case)
    )
    return _json_object(head, "queries", items)


def export_quepid(session: Session, case: Case) -> Iterator[str]:
    """Yield the ratings as Quepid's JSON ratings export: each query with doc → rating."""
    items = (
        {"query": text, "ratings": {d: _json_number(r) for d, r in ratings}}
        for text, ratings in _grouped(session, case)
    )
    return _json_object({}, "queries", items)


def run_as_trec(session: Session, run: Run) -> Iterator[str]:
    """Yield a run as a TREC run file: `QID Q0 DOCID RANK SCORE relevo-RUNID`.

    SCORE is (docs of the query) - RANK + 1: strictly decreasing, so trec_eval, ranx and
    pytrec_eval (which sort by score) read back exactly Relevo's ranking. Every returned
    doc is listed; a doc id the engine returned twice keeps its first (best) rank.
    """
    stmt = (
        select(RunQuery.query_id, RunQuery.docs)
        .where(RunQuery.run_id == run.id, RunQuery.query_id.is_not(None))
        .order_by(RunQuery.position, RunQuery.query_id)
        .execution_options(yield_per=1000)
    )
    tag = f"relevo-{run.id}"
    for query_id, docs in session.execute(stmt):
        ids: list[str] = []
        seen: set[str] = set()
        for doc in docs or []:
            doc_id = str(doc.get("id"))
            if doc_id not in seen:
                seen.add(doc_id)
                ids.append(doc_id)
        for rank, doc_id in enumerate(ids, 1):
            yield f"{query_id} Q0 {trec_doc_id(doc_id)} {rank} {len(ids) - rank + 1} {tag}\n"
