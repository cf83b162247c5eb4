"""Import ratings into a case from CSV (`query,docid,rating`) or TREC qrels.

All or nothing, in memory bounded whatever the size of the file: the file is read once,
line by line; every good line goes into a temporary staging table inside the request's
transaction, every bad line is counted (the first 100 kept with their line numbers). The
changes are then made with a few set-based statements: the new queries in one bulk insert,
the ratings in one upsert where the last line of a repeated (query, doc) wins. A bad line or
a preview rolls the transaction back, so nothing is ever half-written.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Literal

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    and_,
    func,
    insert,
    literal,
    select,
    true,
    update,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.cases.bulk_lines import MAX_TAGS, BulkLineError, parse_line
from app.errors import ImportRejected
from app.models import Case, Query, Rating, User
from app.models.base import utcnow
from app.runs import service as run_service
from app.scorers.service import rating_bounds

__all__ = [
    "CSV_HEADER",
    "ImportFormat",
    "ImportRejected",
    "ImportSummary",
    "doc_id_from_trec",
    "import_ratings",
    "trec_doc_id",
]

CSV_HEADER = ("query", "docid", "rating")
ImportFormat = Literal["csv", "trec"]
MAX_REPORTED = 100
MAX_QUERY_CHARS = 1000  # the columns' sizes
MAX_DOC_ID_CHARS = 500
STAGE_BATCH = 10_000
NEW_QUERIES_SHOWN = 20

_staging = MetaData()
_lines = Table(
    "relevo_import_lines",
    _staging,
    Column("line", Integer, nullable=False),
    Column("query_text", String(MAX_QUERY_CHARS)),
    Column("query_id", Integer),
    Column("doc_id", String(MAX_DOC_ID_CHARS), nullable=False),
    Column("rating", Float, nullable=False),
    prefixes=["TEMPORARY"],
)
_final = Table(
    "relevo_import_final",
    _staging,
    Column("query_id", Integer, nullable=False),
    Column("doc_id", String(MAX_DOC_ID_CHARS), nullable=False),
    Column("rating", Float, nullable=False),
    prefixes=["TEMPORARY"],
)


@dataclass
class ImportSummary:
    """What an import did (or, previewed, would do)."""

    queries_created: int = 0
    ratings_set: int = 0
    ratings_unchanged: int = 0
    duplicates: int = 0
    lines: int = 0
    new_queries: list[str] = field(default_factory=list)


class _Errors:
    """Bad lines: every one counted, the first MAX_REPORTED kept (in file order)."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: list[tuple[int, str]] = []

    def append(self, error: tuple[int, str]) -> None:
        self.count += 1
        if len(self.kept) < MAX_REPORTED:
            self.kept.append(error)


# The doc id of a staged line that only names a query (CSV "query,,"): never a real doc id,
# which is never empty.
QUERY_ONLY = ""
QUERY_ONLY_MARK = "-"  # what such a line's doc id is checked as


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


# Optional CSV columns: a query's tags ("head,brand") and weight, set on the query.
Extras = dict[str, tuple[tuple[str, ...] | None, float | None]]


def _csv_lines(
    stream: IO[str], low: float, high: float, errors: _Errors, extras: Extras | None = None
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
    ti = names.index("tags") if "tags" in names else None
    wi = names.index("weight") if "weight" in names else None
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
        if extras is not None and (ti is not None or wi is not None):
            problem = _extras(row, ti, wi, query, extras)
            if problem:
                errors.append((number, problem))
                continue
        if query and not doc_id and not row[ri].strip():
            # A query with no rating (Quepid's CSV export writes "toy story,,"): the query
            # is created, nothing is rated.
            problem = _check_ids(number, query, QUERY_ONLY_MARK)
            if problem:
                errors.append((number, problem))
                continue
            yield _Line(number, query, QUERY_ONLY, 0.0)
            continue
        problem = _check_ids(number, query, doc_id)
        value, rating_problem = _rating(row[ri], low, high)
        if problem or rating_problem:
            errors.append((number, problem or rating_problem or ""))
            continue
        assert value is not None
        yield _Line(number, query, doc_id, value)


def _extras(
    row: Sequence[str], ti: int | None, wi: int | None, query: str, extras: Extras
) -> str | None:
    """Record a line's tags and weight for its query; return the problem of a bad one."""
    tags_text = row[ti] if ti is not None and ti < len(row) else ""
    weight_text = row[wi] if wi is not None and wi < len(row) else ""
    if not tags_text.strip() and not weight_text.strip():
        return None
    try:
        line = parse_line(f"{query}\t{tags_text.replace(chr(9), ' ')}\t{weight_text}")
    except BulkLineError as exc:
        return str(exc)
    tags, weight = extras.get(query, (None, None))
    if line.tags:
        tags = tuple(dict.fromkeys((*(tags or ()), *line.tags)))
    extras[query] = (tags, line.weight if line.weight is not None else weight)
    return None


def _set_extras(session: Session, case: Case, extras: Extras) -> None:
    """Give the file's queries their tags (added to theirs) and weights."""
    texts = list(extras)
    for start in range(0, len(texts), STAGE_BATCH):
        chunk = texts[start : start + STAGE_BATCH]
        stmt = select(Query).where(Query.case_id == case.id, Query.text.in_(chunk))
        for query in session.scalars(stmt):
            tags, weight = extras[query.text]
            if tags:
                query.tags = list(dict.fromkeys((*(query.tags or []), *tags)))[:MAX_TAGS]
            if weight is not None:
                query.weight = weight
    session.flush()


# TREC files separate their fields with whitespace: a doc id's whitespace (and its "%", so
# that the escape reads back unambiguously) goes out percent-escaped, in qrels and runs alike,
# so trec_eval still matches them; the qrels import reads the same escapes back.
_TREC_ESCAPES = {
    "%": "%25",
    " ": "%20",
    "\t": "%09",
    "\n": "%0A",
    "\r": "%0D",
    "\v": "%0B",
    "\f": "%0C",
}
_TREC_ESCAPE = str.maketrans(_TREC_ESCAPES)
_TREC_UNESCAPE = re.compile("|".join(re.escape(v) for v in _TREC_ESCAPES.values()))
_TREC_UNESCAPED = {v: k for k, v in _TREC_ESCAPES.items()}


def trec_doc_id(doc_id: str) -> str:
    """Return a doc id as a TREC file holds it (whitespace and "%" percent-escaped)."""
    return doc_id.translate(_TREC_ESCAPE)


def doc_id_from_trec(field: str) -> str:
    """Return the doc id a TREC file's field stands for (the escapes of trec_doc_id undone)."""
    if "%" not in field:
        return field
    return _TREC_UNESCAPE.sub(lambda m: _TREC_UNESCAPED[m.group(0)], field)


def _trec_lines(stream: IO[str], low: float, high: float, errors: _Errors) -> Iterator[_Line]:
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
        qid, _iteration, field, raw = parts
        doc_id = doc_id_from_trec(field)
        problem = _check_ids(number, qid, doc_id)
        value, rating_problem = _rating(raw, low, high)
        if problem or rating_problem:
            errors.append((number, problem or rating_problem or ""))
            continue
        assert value is not None
        yield _Line(number, qid, doc_id, value)
    if not seen_any:
        errors.append((1, "the file is empty: expected lines QID 0 DOCID RATING"))


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
    A file with any bad line raises ImportRejected and changes nothing; in a preview it
    also carries what the good lines would change ("120 ratings to set, 2 bad lines").
    """
    try:
        summary = _import_once(session, case, user, stream, fmt, preview)
    except IntegrityError:
        # Another request added one of the file's new queries meanwhile: read it once more.
        stream.seek(0)
        summary = _import_once(session, case, user, stream, fmt, preview)
    if preview:
        session.rollback()
        return summary
    _staging.drop_all(session.connection())
    session.commit()
    run = run_service.latest_finished_run(session=session, case=case)
    if run is not None and summary.ratings_set:
        run_service.rescore_run(session=session, run=run)
    return summary


def _import_once(
    session: Session, case: Case, user: User, stream: IO[str], fmt: ImportFormat, preview: bool
) -> ImportSummary:
    """Stage, check, count and write (not yet committed); roll back on any error."""
    low, high = rating_bounds(case.scorer)
    errors = _Errors()
    connection = session.connection()
    _staging.drop_all(connection, checkfirst=True)  # left by a connection's earlier failure
    _staging.create_all(connection)
    try:
        summary = ImportSummary()
        extras: Extras = {}
        if fmt == "csv":
            lines: Iterator[_Line] = _csv_lines(stream, low, high, errors, extras)
        else:
            lines = _trec_lines(stream, low, high, errors)
        summary.lines = _stage(session, case, fmt, lines, errors)
        if errors.count and not preview:
            raise ImportRejected(
                f"{errors.count} bad lines; nothing was imported. Fix them and import again.",
                errors.kept,
            )
        if fmt == "csv":
            _add_queries(session, case, summary)
            _set_extras(session, case, extras)
        _count_and_write(session, user, summary)
        if errors.count:
            raise ImportRejected(
                f"{errors.count} bad lines; nothing would be imported. Fix them and preview again.",
                errors.kept,
                summary,
            )
    except BaseException:
        session.rollback()
        raise
    return summary


def _stage(
    session: Session, case: Case, fmt: ImportFormat, lines: Iterator[_Line], errors: _Errors
) -> int:
    """Copy the good lines into the staging table in batches; return how many."""
    known: set[int] = set()
    if fmt == "trec":
        known = set(session.scalars(select(Query.id).where(Query.case_id == case.id)))
    batch: list[dict[str, Any]] = []
    staged = 0
    for line in lines:
        row: dict[str, Any] = {"line": line.number, "doc_id": line.doc_id, "rating": line.rating}
        if fmt == "csv":
            row |= {"query_text": line.query, "query_id": None}
        elif line.query.isdigit() and int(line.query) in known:
            row |= {"query_text": None, "query_id": int(line.query)}
        else:
            errors.append((line.number, f"{line.query!r} is not the id of a query of this case"))
            continue
        batch.append(row)
        if len(batch) == STAGE_BATCH:
            session.execute(insert(_lines), batch)
            staged += len(batch)
            batch.clear()
    if batch:
        session.execute(insert(_lines), batch)
        staged += len(batch)
    return staged


def _add_queries(session: Session, case: Case, summary: ImportSummary) -> None:
    """Create the file's new query texts (in order of first appearance); fill in query ids."""
    known = select(Query.text).where(Query.case_id == case.id)
    first = func.min(_lines.c.line).label("first")
    new = session.execute(
        select(_lines.c.query_text, first)
        .where(_lines.c.query_text.not_in(known))
        .group_by(_lines.c.query_text)
        .order_by(first)
    ).scalars()
    last = session.scalar(select(func.max(Query.position)).where(Query.case_id == case.id))
    position = 0 if last is None else last + 1
    batch: list[dict[str, Any]] = []
    for text in new:
        if len(summary.new_queries) < NEW_QUERIES_SHOWN:
            summary.new_queries.append(text)
        batch.append({"case_id": case.id, "text": text, "position": position, "options": {}})
        position += 1
        summary.queries_created += 1
        if len(batch) == STAGE_BATCH:
            session.execute(insert(Query), batch)
            batch.clear()
    if batch:
        session.execute(insert(Query), batch)
    if session.get_bind().dialect.name == "postgresql":
        # Fresh temporary rows have no statistics: without them the join below is planned
        # as a million index probes.
        session.execute(sql_text("ANALYZE relevo_import_lines"))
    # UPDATE … FROM: one join of the lines with the case's queries (PostgreSQL and SQLite).
    session.execute(
        update(_lines)
        .values(query_id=Query.id)
        .where(Query.case_id == case.id, Query.text == _lines.c.query_text)
    )


def _count_and_write(session: Session, user: User, summary: ImportSummary) -> None:
    """Keep the last line of each (query, doc), count the changes and upsert them."""
    latest = (
        select(
            _lines.c.query_id,
            _lines.c.doc_id,
            _lines.c.rating,
            func.row_number()
            .over(partition_by=(_lines.c.query_id, _lines.c.doc_id), order_by=_lines.c.line.desc())
            .label("nth"),
        )
        .where(_lines.c.doc_id != QUERY_ONLY)
        .subquery()
    )
    session.execute(
        insert(_final).from_select(
            ["query_id", "doc_id", "rating"],
            select(latest.c.query_id, latest.c.doc_id, latest.c.rating).where(latest.c.nth == 1),
        )
    )
    distinct = session.scalar(select(func.count()).select_from(_final)) or 0
    summary.duplicates = summary.lines - distinct
    same = and_(
        Rating.query_id == _final.c.query_id,
        Rating.doc_id == _final.c.doc_id,
        Rating.rating == _final.c.rating,
    )
    summary.ratings_unchanged = (
        session.scalar(select(func.count()).select_from(_final).join(Rating, same)) or 0
    )
    summary.ratings_set = distinct - summary.ratings_unchanged
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    upsert = dialect.insert(Rating).from_select(
        ["query_id", "doc_id", "rating", "rated_by_id", "updated_at"],
        select(
            _final.c.query_id,
            _final.c.doc_id,
            _final.c.rating,
            literal(user.id, Integer),
            literal(utcnow(), Rating.__table__.c.updated_at.type),
        )
        # SQLite reads "SELECT ... FROM t ON CONFLICT" as a join unless a WHERE ends it.
        .where(true()),
    )
    session.execute(
        upsert.on_conflict_do_update(
            index_elements=["query_id", "doc_id"],
            set_={
                "rating": upsert.excluded.rating,
                "rated_by_id": upsert.excluded.rated_by_id,
                "updated_at": upsert.excluded.updated_at,
            },
            where=Rating.rating != upsert.excluded.rating,
        )
    )
