"""Ratings in and out of a case: CSV, TREC qrels, RRE and Quepid JSON; runs as TREC runs.

Imports are all or nothing: the whole file is checked first (every bad line reported with
its line number), then written in one transaction with bulk upserts, so a million rows
need neither a million ORM objects nor a million round trips.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from app.errors import RelevoError
from app.models import Case, Query, Rating, Run, RunQuery, User
from app.search.fieldspec import parse_field_spec
from app.services import cases as case_service
from app.services import runs as run_service
from app.services.scorers import rating_bounds

__all__ = [
    "CSV_HEADER",
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

CSV_HEADER = ("query", "docid", "rating")
ImportFormat = Literal["csv", "trec"]
MAX_REPORTED = 100
MAX_QUERY_CHARS = 1000  # the columns' sizes
MAX_DOC_ID_CHARS = 500
WRITE_BATCH = 5000


class ImportRejected(RelevoError):
    """A file with bad lines: 422 with every problem (the first 100) by line number."""

    status_code = 422

    def __init__(self, message: str, errors: Sequence[tuple[int, str]]) -> None:
        super().__init__(message)
        self.errors = [{"line": line, "message": text} for line, text in errors[:MAX_REPORTED]]

    def extra(self) -> dict[str, Any]:
        """Return the list of bad lines, beside "detail" in the error body."""
        return {"errors": self.errors}


@dataclass
class ImportSummary:
    """What an import did (or, previewed, would do)."""

    queries_created: int = 0
    ratings_set: int = 0
    ratings_unchanged: int = 0
    duplicates: int = 0
    lines: int = 0
    new_queries: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- export


def _number(value: float) -> str:
    # trec_eval tools read grades with int(): whole numbers go out as 3, not 3.0.
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _rated(session: Session, case: Case) -> Iterator[tuple[int, str, str, float]]:
    """Yield (query id, query text, doc id, rating) in query then doc order, streamed."""
    stmt = (
        select(Query.id, Query.text, Rating.doc_id, Rating.rating)
        .join(Rating, Rating.query_id == Query.id)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id, Rating.doc_id)
        .execution_options(yield_per=WRITE_BATCH)
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
        yield f"{query_id} 0 {doc_id} {_number(rating)}\n"


def _grouped(session: Session, case: Case) -> list[tuple[str, list[tuple[str, float]]]]:
    queries: dict[int, tuple[str, list[tuple[str, float]]]] = {}
    for query in session.execute(
        select(Query.id, Query.text)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id)
    ):
        queries[query.id] = (query.text, [])
    for query_id, _text, doc_id, rating in _rated(session, case):
        queries[query_id][1].append((doc_id, rating))
    return list(queries.values())


def export_rre(session: Session, case: Case) -> dict[str, Any]:
    """Return the ratings as Rated Ranking Evaluator judgements (the shape Quepid exports)."""
    spec = case_service.current_try(session=session, case=case).field_spec
    return {
        "id_field": parse_field_spec(spec).id_field,
        "index": case.name,
        "template": "template.json",
        "queries": [
            {
                "placeholders": {"$query": text},
                "relevant_documents": {
                    _number(grade): [d for d, r in ratings if r == grade]
                    for grade in sorted({r for _d, r in ratings})
                },
            }
            for text, ratings in _grouped(session, case)
        ],
    }


def export_quepid(session: Session, case: Case) -> dict[str, Any]:
    """Return the ratings as Quepid's JSON ratings export: each query with doc → rating."""
    return {
        "queries": [
            {"query": text, "ratings": {doc_id: rating for doc_id, rating in ratings}}
            for text, ratings in _grouped(session, case)
        ]
    }


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
            yield f"{query_id} Q0 {doc_id} {rank} {len(ids) - rank + 1} {tag}\n"


# ---------------------------------------------------------------------------- import


@dataclass(frozen=True)
class _Line:
    number: int
    query: str  # the query text (CSV) or the query id as text (TREC)
    doc_id: str
    rating: float


def _rating(raw: str, low: float, high: float) -> tuple[float | None, str | None]:
    text = raw.strip()
    if not text:
        return None, "the rating is empty"
    try:
        value = float(text)
    except ValueError:
        return None, f"the rating {text!r} is not a number"
    if not math.isfinite(value):
        return None, f"the rating {text!r} is not a finite number"
    if not low <= value <= high:
        return None, f"the rating {text} is outside the scorer's scale [{low:g}, {high:g}]"
    return value, None


def _check_ids(number: int, query: str, doc_id: str) -> str | None:
    if not query:
        return "the query is empty"
    if not doc_id:
        return "the docid is empty"
    if "\x00" in query or "\x00" in doc_id:
        return "the line holds a NUL character"
    if len(query) > MAX_QUERY_CHARS:
        return f"the query is longer than {MAX_QUERY_CHARS} characters"
    if len(doc_id) > MAX_DOC_ID_CHARS:
        return f"the docid is longer than {MAX_DOC_ID_CHARS} characters"
    return None


def _header_problem(header: Sequence[str]) -> str | None:
    names = [h.strip().lower() for h in header]
    missing = [c for c in CSV_HEADER if c not in names]
    if not missing:
        return None
    found = ",".join(header)[:200]
    hint = ""
    if len(header) == 1:
        for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):
            if sep in header[0]:
                hint = f"; it looks separated by {name}: use commas"
                break
    return f"the header must name the columns query,docid,rating (found {found!r}{hint})"


def _csv_lines(
    stream: IO[str], low: float, high: float, errors: list[tuple[int, str]]
) -> Iterator[_Line]:
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        errors.append(
            (1, "the file is empty: the first line must be the header query,docid,rating")
        )
        return
    except csv.Error as exc:
        errors.append((1, f"the header is not valid CSV: {exc}"))
        return
    problem = _header_problem(header)
    if problem is not None:
        errors.append((1, problem))
        return
    names = [h.strip().lower() for h in header]
    qi, di, ri = (names.index(c) for c in CSV_HEADER)
    needed = max(qi, di, ri) + 1
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # e.g. a quote never closed: the rest is one bad field
            errors.append((start, f"not valid CSV: {exc}"))
            return
        number, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue  # blank lines are allowed
        if len(row) < needed:
            errors.append((number, f"expected at least {needed} columns, found {len(row)}"))
            continue
        query, doc_id = row[qi].strip(), row[di].strip()
        problem = _check_ids(number, query, doc_id)
        value, rating_problem = _rating(row[ri], low, high)
        if problem or rating_problem:
            errors.append((number, problem or rating_problem or ""))
            continue
        assert value is not None
        yield _Line(number, query, doc_id, value)


def _trec_lines(
    stream: IO[str], low: float, high: float, errors: list[tuple[int, str]]
) -> Iterator[_Line]:
    seen_any = False
    for number, text in enumerate(stream, 1):
        parts = text.split()
        if not parts:
            continue
        seen_any = True
        if len(parts) != 4:
            errors.append(
                (number, f"expected 4 fields (QID ITER DOCID RATING), found {len(parts)}")
            )
            continue
        qid, _iteration, doc_id, raw = parts
        problem = _check_ids(number, qid, doc_id)
        value, rating_problem = _rating(raw, low, high)
        if problem or rating_problem:
            errors.append((number, problem or rating_problem or ""))
            continue
        assert value is not None
        yield _Line(number, qid, doc_id, value)
    if not seen_any:
        errors.append((1, "the file is empty: expected lines QID 0 DOCID RATING"))


def _read(
    stream: IO[str], fmt: ImportFormat, low: float, high: float
) -> tuple[dict[tuple[str, str], float], int, int, list[tuple[int, str]]]:
    """Return (query, doc) → rating (last line wins), lines read, duplicates, bad lines."""
    errors: list[tuple[int, str]] = []
    wanted: dict[tuple[str, str], float] = {}
    lines = duplicates = 0
    read = _csv_lines if fmt == "csv" else _trec_lines
    for line in read(stream, low, high, errors):
        lines += 1
        key = (line.query, line.doc_id)
        if key in wanted:
            duplicates += 1
        wanted[key] = line.rating
    return wanted, lines, duplicates, errors


def import_ratings(
    *,
    session: Session,
    case: Case,
    user: User,
    stream: IO[str],
    fmt: ImportFormat,
    preview: bool = False,
) -> ImportSummary:
    """Check the whole file, then (unless previewing) write it in one transaction.

    CSV names queries by text (new texts become queries); TREC by the case's query ids.
    A file with any bad line raises ImportRejected and changes nothing.
    """
    low, high = rating_bounds(case.scorer)
    wanted, lines, duplicates, errors = _read(stream, fmt, low, high)
    queries = dict(
        session.execute(select(Query.text, Query.id).where(Query.case_id == case.id)).all()
    )
    if fmt == "trec":
        known = set(queries.values())
        unknown = sorted(
            q for q in {q for q, _d in wanted} if not q.isdigit() or int(q) not in known
        )
        for qid in unknown[:MAX_REPORTED]:
            line = _first_line(stream, qid)
            errors.append((line, f"{qid!r} is not the id of a query of this case"))
    if errors:
        errors.sort()
        raise ImportRejected(
            f"{len(errors)} bad lines; nothing was imported. Fix them and import again.", errors
        )
    if fmt == "trec":
        by_id = {(int(q), d): v for (q, d), v in wanted.items()}
        new_texts: list[str] = []
    else:
        new_texts = list(dict.fromkeys(q for q, _d in wanted if q not in queries))
        by_id = {}
    summary = ImportSummary(lines=lines, duplicates=duplicates, new_queries=new_texts[:20])
    summary.queries_created = len(new_texts)
    if fmt == "csv":
        queries |= _create_queries(session, case, new_texts, dry_run=preview)
        by_id = {(queries[q], d): v for (q, d), v in wanted.items()}
    wanted.clear()  # one copy of the file's ratings at a time
    current = _current(session, case)
    summary.ratings_set = sum(
        1 for k, v in by_id.items() if (old := current.get(k)) is None or old[1] != v
    )
    summary.ratings_unchanged = len(by_id) - summary.ratings_set
    if preview:
        session.rollback()
        return summary
    _write(session, user, by_id, current)
    session.commit()
    run = run_service.latest_finished_run(session=session, case=case)
    if run is not None and summary.ratings_set:
        run_service.rescore_run(session=session, run=run)
    return summary


def _first_line(stream: IO[str], qid: str) -> int:
    # Only for the error report of unknown QIDs: find where the QID first appears.
    stream.seek(0)
    for number, text in enumerate(stream, 1):
        parts = text.split()
        if parts and parts[0] == qid:
            return number
    return 1


def _create_queries(
    session: Session, case: Case, texts: Sequence[str], *, dry_run: bool
) -> dict[str, int]:
    if not texts or dry_run:
        return {text: -n for n, text in enumerate(texts, 1)}  # placeholders, never written
    last = session.scalar(select(func.max(Query.position)).where(Query.case_id == case.id))
    start = 0 if last is None else last + 1
    for offset in range(0, len(texts), WRITE_BATCH):
        chunk = texts[offset : offset + WRITE_BATCH]
        session.execute(
            insert(Query),
            [
                {"case_id": case.id, "text": t, "position": start + offset + n, "options": {}}
                for n, t in enumerate(chunk)
            ],
        )
    created = set(texts)
    rows = session.execute(select(Query.text, Query.id).where(Query.case_id == case.id))
    return {text: qid for text, qid in rows if text in created}


def _current(session: Session, case: Case) -> dict[tuple[int, str], tuple[int, float]]:
    stmt = (
        select(Rating.query_id, Rating.doc_id, Rating.id, Rating.rating)
        .join(Query, Query.id == Rating.query_id)
        .where(Query.case_id == case.id)
    )
    return {(q, d): (rid, r) for q, d, rid, r in session.execute(stmt)}


def _write(
    session: Session,
    user: User,
    wanted: dict[tuple[int, str], float],
    current: dict[tuple[int, str], tuple[int, float]],
) -> None:
    # Batches are built as they go: never a list of every row's parameters at once.
    updates = (
        {"id": old[0], "rating": v, "rated_by_id": user.id}
        for k, v in wanted.items()
        if (old := current.get(k)) is not None and old[1] != v
    )
    inserts = (
        {"query_id": q, "doc_id": d, "rating": v, "rated_by_id": user.id}
        for (q, d), v in wanted.items()
        if (q, d) not in current
    )
    for batch in _batches(updates):
        session.execute(update(Rating), batch)
    for batch in _batches(inserts):
        session.execute(insert(Rating), batch)


def _batches(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == WRITE_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
