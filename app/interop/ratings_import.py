"""Import ratings into a case from CSV (`query,docid,rating`), TREC qrels or RRE ratings.

All or nothing, in memory bounded whatever the size of the file: the file is read once,
line by line; every good line goes into a temporary staging table inside the request's
transaction, every bad line is counted (the first 100 kept with their line numbers). The
changes are then made with a few set-based statements: the new queries in one bulk insert,
the ratings in one upsert where the last line of a repeated (query, doc) wins. A bad line or
a preview rolls the transaction back, so nothing is ever half-written.
"""

from __future__ import annotations

from collections.abc import Iterator
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

from app.errors import ImportRejected
from app.interop.ratings_lines import (
    MAX_DOC_ID_CHARS,
    MAX_QUERY_CHARS,
    QUERY_ONLY,
    Extras,
    Line,
    LineErrors,
    csv_lines,
    trec_lines,
)
from app.interop.ratings_rre import rre_lines
from app.models import Case, Query, Rating, User
from app.models.base import utcnow
from app.queries.bulk_lines import MAX_TAGS
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.scorers.service import rating_bounds

__all__ = ["ImportFormat", "ImportRejected", "ImportSummary", "import_ratings"]

ImportFormat = Literal["csv", "trec", "rre"]
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
    # TREC QIDs (distinct) found as a query id of the case, and as a query's text.
    qids_by_id: int = 0
    qids_by_text: int = 0

    @property
    def query_match(self) -> str | None:
        """Return how a TREC file's QIDs were matched: "id", "text", "id and text" or None."""
        rules = [r for r, n in (("id", self.qids_by_id), ("text", self.qids_by_text)) if n]
        return " and ".join(rules) or None


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

    CSV and RRE name queries by text (new texts become queries); TREC by the case's query ids, a
    QID that is none of them by the text of a query of the case (as a run file's QIDs are).
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
    session.flush()
    run = run_service.latest_finished_run(session=session, case=case)
    if run is not None and summary.ratings_set:
        rescoring.rescore_run(session=session, run=run)
    return summary


def _import_once(
    session: Session, case: Case, user: User, stream: IO[str], fmt: ImportFormat, preview: bool
) -> ImportSummary:
    """Stage, check, count and write (not yet committed); roll back on any error."""
    low, high = rating_bounds(case.scorer)
    errors = LineErrors()
    connection = session.connection()
    _staging.drop_all(connection, checkfirst=True)  # left by a connection's earlier failure
    _staging.create_all(connection)
    try:
        summary = ImportSummary()
        extras: Extras = {}
        if fmt == "csv":
            lines: Iterator[Line] = csv_lines(stream, low, high, errors, extras)
        elif fmt == "rre":
            lines = rre_lines(stream, low, high, errors)
        else:
            lines = trec_lines(stream, low, high, errors)
        summary.lines = _stage(session, case, fmt, lines, errors, summary)
        if errors.count and not preview:
            raise ImportRejected(
                _bad(errors, "nothing was imported") + " Fix them and import again.",
                errors.kept,
            )
        if fmt != "trec":  # queries named by text: the new ones are created
            _add_queries(session, case, summary)
            _set_extras(session, case, extras)
        _count_and_write(session, user, summary)
        if errors.count:
            raise ImportRejected(
                _bad(errors, "nothing would be imported") + " Fix them and preview again.",
                errors.kept,
                summary,
            )
    except BaseException:
        session.rollback()
        raise
    return summary


def _bad(errors: LineErrors, done: str) -> str:
    """Return a refusal's message: how many bad lines, then each kind of problem once."""
    lines = "line" if errors.count == 1 else "lines"
    return f"{errors.count:,} bad {lines}; {done}. {errors.summary()}."


NOT_A_QUERY = "the QID is neither a query id nor a query text of this case"


def _stage(
    session: Session,
    case: Case,
    fmt: ImportFormat,
    lines: Iterator[Line],
    errors: LineErrors,
    summary: ImportSummary,
) -> int:
    """Copy the good lines into the staging table in batches; return how many."""
    ids: set[int] = set()
    by_text: dict[str, int] = {}
    if fmt == "trec":
        for query_id, text in session.execute(
            select(Query.id, Query.text).where(Query.case_id == case.id)
        ):
            ids.add(query_id)
            by_text[text] = query_id
    matched: dict[str, str] = {}  # QID → the rule that found its query
    batch: list[dict[str, Any]] = []
    staged = 0
    for line in lines:
        row: dict[str, Any] = {"line": line.number, "doc_id": line.doc_id, "rating": line.rating}
        if fmt != "trec":
            row |= {"query_text": line.query, "query_id": None}
        elif line.query.isdigit() and int(line.query) in ids:
            row |= {"query_text": None, "query_id": int(line.query)}
            matched.setdefault(line.query, "id")
        elif line.query in by_text:
            row |= {"query_text": None, "query_id": by_text[line.query]}
            matched.setdefault(line.query, "text")
        else:
            errors.append(
                (line.number, f"QID {line.query!r} is not a query id or query text of this case"),
                NOT_A_QUERY
                + " (add the queries to the case first, or import a CSV, which creates them)",
            )
            continue
        batch.append(row)
        if len(batch) == STAGE_BATCH:
            session.execute(insert(_lines), batch)
            staged += len(batch)
            batch.clear()
    if batch:
        session.execute(insert(_lines), batch)
        staged += len(batch)
    summary.qids_by_id = sum(1 for rule in matched.values() if rule == "id")
    summary.qids_by_text = len(matched) - summary.qids_by_id
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
