"""A case's queries and their ratings."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.access import valid_id
from app.cases.totals import refresh_case_totals
from app.errors import Conflict, Invalid, NotFound
from app.models import Case, Query, Rating, Scorer, User
from app.queries.bulk_lines import BulkLine, clean_tags, parse_line
from app.queries.schemas import QueriesPatch, QueryCreate, QueryUpdate, RatingIn
from app.scorers.service import rating_bounds

T = TypeVar("T")
MAX_TAGS = 20


def _once_more_on_clash(session: Session, write: Callable[[], T]) -> T:
    """Run ``write``; when a concurrent request inserted the same row first, run it again.

    The second attempt sees the other request's row and updates or returns it, so two
    simultaneous first ratings of a document (or adds of a query) both succeed.
    """
    if _nothing_written(session):
        try:
            return write()
        except IntegrityError:
            session.rollback()  # the transaction had written nothing else: nothing is lost
            return write()
    try:
        with session.begin_nested():  # a savepoint: the request's earlier work stays
            return write()
    except IntegrityError:
        return write()


def _nothing_written(session: Session) -> bool:
    """Whether, on SQLite, the transaction has written nothing yet (pysqlite opens it at the
    first write). A savepoint would open it for reading, and a transaction that read cannot
    become a writer while another one writes: it fails at once instead of waiting its turn."""
    connection = session.connection()
    if connection.dialect.name != "sqlite":
        return False
    driver = connection.connection.dbapi_connection
    return driver is not None and not bool(getattr(driver, "in_transaction", True))


def list_queries(*, session: Session, case: Case) -> list[Query]:
    """Return the case's queries in position order."""
    stmt = select(Query).where(Query.case_id == case.id).order_by(Query.position, Query.id)
    return list(session.scalars(stmt))


def get_query(*, session: Session, case: Case, query_id: int) -> Query:
    """Return a query of this case, or 404."""
    query = session.get(Query, query_id) if valid_id(query_id) else None
    if query is None or query.case_id != case.id:
        raise NotFound(f"Case {case.id} has no query {query_id}.")
    return query


def _next_position(session: Session, case: Case) -> int:
    last = session.scalar(select(func.max(Query.position)).where(Query.case_id == case.id))
    return 0 if last is None else last + 1


def add_query(*, session: Session, case: Case, body: QueryCreate) -> tuple[Query, bool]:
    """Add a query; the same text again returns the existing one. Returns (query, created)."""
    return _once_more_on_clash(session, lambda: _add_query(session, case, body))


def _add_query(session: Session, case: Case, body: QueryCreate) -> tuple[Query, bool]:
    existing = session.scalar(
        select(Query).where(Query.case_id == case.id, Query.text == body.text)
    )
    if existing is not None:
        return existing, False
    query = Query(
        case_id=case.id,
        text=body.text,
        position=_next_position(session, case),
        notes=body.notes,
        information_need=body.information_need,
        options=body.options,
        tags=list(clean_tags(body.tags)),
        weight=body.weight,
    )
    session.add(query)
    session.flush()
    return query, True


def add_queries(*, session: Session, case: Case, texts: Sequence[str]) -> list[Query]:
    """Add many queries at once, skipping blanks and texts the case has; return them all.

    A line may be ``text<TAB>tag1,tag2<TAB>weight``: the tags are added to the query's and
    the weight set, for a new query as for one the case has.
    """
    return _once_more_on_clash(session, lambda: _add_queries(session, case, texts))


def _add_queries(session: Session, case: Case, texts: Sequence[str]) -> list[Query]:
    existing = {q.text: q for q in list_queries(session=session, case=case)}
    lines = [parse_line(raw) for raw in texts]
    _check_tag_cap(lines, existing)
    position = _next_position(session, case)
    result: list[Query] = []
    seen: set[str] = set()
    weighed = False
    for line in lines:
        text = line.text
        if not text or text in seen:
            continue
        seen.add(text)
        query = existing.get(text)
        if query is None:
            query = Query(
                case_id=case.id, text=text, position=position, options={}, tags=[], weight=1.0
            )
            position += 1
            session.add(query)
        if line.tags:
            query.tags = _merged(query.tags or [], line.tags, ())
        if line.weight is not None:
            query.weight, weighed = line.weight, True
        result.append(query)
    if weighed:
        refresh_case_totals(session=session, case_id=case.id)
    session.flush()
    return result


def _check_tag_cap(lines: Sequence[BulkLine], existing: dict[str, Query]) -> None:
    """Refuse the whole add (nothing changed) when a query would get more than 20 tags."""
    merged: dict[str, list[str]] = {}
    for line in lines:
        if line.text and line.text not in merged:
            known = existing.get(line.text)
            merged[line.text] = _merged((known.tags or []) if known else [], line.tags or (), ())
    over = [text for text, tags in merged.items() if len(tags) > MAX_TAGS]
    if over:
        more = f" (and {len(over) - 1} more)" if len(over) > 1 else ""
        raise Invalid(
            ("queries",),
            f"The query {over[0]!r}{more} would have more than {MAX_TAGS} tags: "
            "remove some of its tags first. Nothing was added.",
        )


def update_query(*, session: Session, case: Case, query: Query, body: QueryUpdate) -> Query:
    """Change a query's text, notes, information need, options or position."""
    changes = body.model_dump(exclude_unset=True)
    text = changes.get("text")
    if text is not None and text != query.text:
        clash = session.scalar(select(Query.id).where(Query.case_id == case.id, Query.text == text))
        if clash is not None:
            raise Conflict(f"The case has the query {text!r} already.")
    for name, value in changes.items():
        if value is None and name in ("text", "options", "position", "tags", "weight"):
            continue
        setattr(query, name, list(clean_tags(value)) if name == "tags" else value)
    if changes.get("weight") is not None:
        refresh_case_totals(session=session, case_id=case.id)
    session.flush()
    return query


def patch_queries(*, session: Session, case: Case, body: QueriesPatch) -> list[Query]:
    """Add and remove tags of many queries and set their weight; return them in order.

    A query id the case does not have is a 404 and nothing changes.
    """
    wanted = set(body.query_ids)
    # An id beyond any row's is missing like any other (the database would refuse it).
    found = list(
        session.scalars(
            select(Query)
            .where(Query.case_id == case.id, Query.id.in_([i for i in wanted if valid_id(i)]))
            .order_by(Query.position, Query.id)
        )
    )
    missing = wanted - {q.id for q in found}
    if missing:
        raise NotFound(f"Case {case.id} has no query {min(missing)}.")
    add, remove = clean_tags(body.add_tags), clean_tags(body.remove_tags)
    too_many = [q.text for q in found if len(_merged(q.tags or [], add, remove)) > MAX_TAGS]
    if too_many:
        raise Invalid(("add_tags",), f"The query {too_many[0]!r} would have more than 20 tags.")
    for query in found:
        if add or remove:
            query.tags = _merged(query.tags or [], add, remove)
        if body.weight is not None:
            query.weight = body.weight
    if body.weight is not None:
        refresh_case_totals(session=session, case_id=case.id)
    session.flush()
    return found


def _merged(tags: Sequence[str], add: Sequence[str], remove: Sequence[str]) -> list[str]:
    gone = set(remove)
    result = [t for t in tags if t not in gone]
    result.extend(t for t in add if t not in result and t not in gone)
    return result


def delete_query(*, session: Session, query: Query) -> None:
    """Delete a query with its ratings; past runs keep their copy of its results.

    With a weighted mean, a deleted query's rows weigh 1 from now on: the totals follow.
    """
    case_id = query.case_id
    session.delete(query)
    session.flush()
    refresh_case_totals(session=session, case_id=case_id)
    session.flush()


def list_ratings(*, session: Session, query: Query) -> list[Rating]:
    """Return the query's ratings by doc id."""
    stmt = select(Rating).where(Rating.query_id == query.id).order_by(Rating.doc_id)
    return list(session.scalars(stmt))


def set_ratings(
    *, session: Session, query: Query, scorer: Scorer, ratings: Sequence[RatingIn], user: User
) -> dict[str, float]:
    """Upsert ratings (a null rating deletes) within the scorer's scale; return all of them."""
    return set_ratings_with_raters(
        session=session, query=query, scorer=scorer, ratings=ratings, user=user
    )[0]


def set_ratings_with_raters(
    *, session: Session, query: Query, scorer: Scorer, ratings: Sequence[RatingIn], user: User
) -> tuple[dict[str, float], dict[str, str | None]]:
    """As set_ratings, and also return each rated doc's rater email (in the same look-up)."""
    low, high = rating_bounds(scorer)
    for index, item in enumerate(ratings):
        if item.rating is not None and (
            not math.isfinite(item.rating) or not low <= item.rating <= high
        ):
            raise Invalid(
                ("ratings", index, "rating"),
                f"Rating {item.rating} is outside the scorer's scale [{low:g}, {high:g}].",
            )
    return _once_more_on_clash(session, lambda: _write_ratings(session, query, ratings, user))


def _write_ratings(
    session: Session, query: Query, ratings: Sequence[RatingIn], user: User
) -> tuple[dict[str, float], dict[str, str | None]]:
    emails: dict[str, str | None] = {}
    current: dict[str, Rating] = {}
    for rating, _user_id, email in ratings_with_raters(session=session, query=query):
        current[rating.doc_id] = rating
        emails[rating.doc_id] = email
    removed = [item.doc_id for item in ratings if item.rating is None]
    if removed:
        session.execute(
            delete(Rating).where(Rating.query_id == query.id, Rating.doc_id.in_(removed))
        )
    for item in ratings:
        if item.rating is None:
            current.pop(item.doc_id, None)
            continue
        existing = current.get(item.doc_id)
        if existing is None:
            existing = Rating(
                query_id=query.id, doc_id=item.doc_id, rating=item.rating, rated_by_id=user.id
            )
            session.add(existing)
            current[item.doc_id] = existing
        else:
            existing.rating = item.rating
            existing.rated_by_id = user.id
            existing.agent = None  # a person's rating now (an agent's marks itself after)
        emails[item.doc_id] = user.email
    # Read before the commit, which may expire the objects (one reload each otherwise).
    result = {doc_id: rating.rating for doc_id, rating in current.items()}
    session.flush()
    return result, {doc_id: emails.get(doc_id) for doc_id in result}


def ratings_with_raters(
    *, session: Session, query: Query
) -> list[tuple[Rating, int | None, str | None]]:
    """Return the query's ratings by doc id, each with its rater's id and email (one query)."""
    stmt = (
        select(Rating, User.id, User.email)
        .outerjoin(User, User.id == Rating.rated_by_id)
        .where(Rating.query_id == query.id)
        .order_by(Rating.doc_id)
    )
    return [(rating, user_id, email) for rating, user_id, email in session.execute(stmt)]


def ratings_of(*, session: Session, query_ids: Sequence[int]) -> dict[int, dict[str, float]]:
    """Return every rating of these queries: query id → doc id → rating."""
    result: dict[int, dict[str, float]] = {qid: {} for qid in query_ids}
    if not query_ids:
        return result
    stmt = select(Rating.query_id, Rating.doc_id, Rating.rating).where(
        Rating.query_id.in_(query_ids)
    )
    for query_id, doc_id, rating in session.execute(stmt):
        result[query_id][doc_id] = rating
    return result
