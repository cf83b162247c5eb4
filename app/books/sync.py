"""Sync a book into a case: an aggregate of its judgements becomes the case's ratings."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import false, select
from sqlalchemy.orm import Session

from app import access
from app.books.consensus import aggregate
from app.books.schemas import RaterKind, RatingsSource, SyncBody, SyncResult
from app.errors import Conflict, Invalid, NotFound
from app.judges import service as judges
from app.models import (
    Book,
    Case,
    CaseBookSync,
    ClickJudgement,
    ClickRater,
    JudgeJudgement,
    Judgement,
    Pair,
    Query,
    Rating,
    Scorer,
    User,
)
from app.models.base import utcnow
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.scorers.service import rating_bounds

TOLERANCE = 1e-9
_KINDS: dict[str, RaterKind] = {"user": "user", "judge": "judge", "clicks": "clicks"}


def aggregates(*, session: Session, book: Book, body: SyncBody) -> dict[tuple[str, str], float]:
    """Return (query text, doc id) → the aggregate rating of every pair that has one."""
    if body.clicks_rater_id is not None:
        return _clicks_ratings(session, book, body.clicks_rater_id)
    stmt = (
        select(Pair.query_text, Pair.doc_id, Judgement.rating)
        .join(Judgement, Judgement.pair_id == Pair.id)
        .where(Pair.book_id == book.id, Judgement.rating.is_not(None))
    )
    if body.method == "rater":
        stmt = stmt.where(_by(Judgement.user_id, body.user_id))
    judged = (
        select(Pair.query_text, Pair.doc_id, JudgeJudgement.rating)
        .join(JudgeJudgement, JudgeJudgement.pair_id == Pair.id)
        .where(Pair.book_id == book.id, JudgeJudgement.rating.is_not(None))
    )
    one_judge = body.method == "rater" and body.judge_id is not None
    if one_judge:
        judged = judged.where(_by(JudgeJudgement.judge_id, body.judge_id))
    sources = []
    if not one_judge and body.judges != "only":
        sources.append(stmt)
    if one_judge or body.judges != "exclude":
        sources.append(judged)
    ratings: dict[tuple[str, str], list[float]] = defaultdict(list)
    for source in sources:
        for text, doc_id, rating in session.execute(source):
            ratings[(text, doc_id)].append(float(rating or 0.0))
    result: dict[tuple[str, str], float] = {}
    for key, values in ratings.items():
        value = aggregate(body.method, sorted(values))
        if value is not None:
            result[key] = value
    return result


def _clicks_ratings(session: Session, book: Book, rater_id: int) -> dict[tuple[str, str], float]:
    """Return one clicks rater's ratings: what a click model judged from a log, as is."""
    stmt = (
        select(Pair.query_text, Pair.doc_id, ClickJudgement.rating)
        .join(ClickJudgement, ClickJudgement.pair_id == Pair.id)
        .where(Pair.book_id == book.id, _by(ClickJudgement.rater_id, rater_id))
    )
    return {(text, doc_id): float(rating) for text, doc_id, rating in session.execute(stmt)}


def _by(column: Any, rater_id: int | None) -> Any:
    # An id beyond any row's has judged nothing, like any other unknown rater: the database
    # would refuse it rather than find nothing.
    return column == rater_id if rater_id is not None and access.valid_id(rater_id) else false()


def sync(*, session: Session, case_id: int, book: Book, body: SyncBody, user: User) -> SyncResult:
    """Write the book's aggregate into the ratings of one of the user's cases and re-score its
    latest run in place."""
    case = access.visible_case(session=session, user=user, case_id=case_id)
    named = [x for x in (body.user_id, body.judge_id, body.clicks_rater_id) if x is not None]
    if body.method == "rater" and len(named) != 1:
        raise Invalid(
            "user_id",
            'The "rater" method needs the user_id of the rater, a judge_id or a '
            "clicks_rater_id (one).",
        )
    if body.clicks_rater_id is not None and body.method != "rater":
        raise Invalid("clicks_rater_id", 'A clicks rater is synced with the "rater" method.')
    rater_name = None
    if body.judge_id is not None:
        rater_name = _check_judge(session, user, body.judge_id)
    if body.clicks_rater_id is not None:
        rater_name = _check_clicks_rater(session, book, body.clicks_rater_id)
    if body.method == "rater" and body.user_id is not None:
        _check_user_rater(session, book, body.user_id)
    wanted = aggregates(session=session, book=book, body=body)
    # All of the case's texts at once: a book may name more texts than one IN list holds.
    queries = dict(
        session.execute(select(Query.text, Query.id).where(Query.case_id == case.id)).all()
    )
    matched = {(queries[t], d): v for (t, d), v in wanted.items() if t in queries}
    without_query = len(wanted) - len(matched)
    if not matched:
        return SyncResult(ratings_set=0, ratings_unchanged=0, pairs_without_query=without_query)
    _check_bounds(case.scorer, matched.values())
    current = {
        (r.query_id, r.doc_id): r
        for r in session.scalars(select(Rating).where(Rating.query_id.in_({q for q, _ in matched})))
    }
    changed = 0
    for (query_id, doc_id), value in matched.items():
        rating = current.get((query_id, doc_id))
        if rating is not None and math.isclose(rating.rating, value, abs_tol=TOLERANCE):
            continue
        changed += 1
        if rating is None:
            session.add(Rating(query_id=query_id, doc_id=doc_id, rating=value, rated_by_id=user.id))
        else:
            rating.rating, rating.rated_by_id = value, user.id
    _remember(session, case, book, body, rater_name)
    session.flush()
    run = run_service.latest_finished_run(session=session, case=case)
    if run is not None and changed:
        rescoring.rescore_run(session=session, run=run)
    return SyncResult(
        ratings_set=changed,
        ratings_unchanged=len(matched) - changed,
        pairs_without_query=without_query,
    )


def _check_judge(session: Session, user: User, judge_id: int) -> str:
    """Return the judge's name; raise NotFound unless the user may use this judge.

    Another user's judge and one that does not exist get the same answer, which names
    nothing: the id says nothing about who owns it, or whether it exists.
    """
    try:
        return judges.visible_judge(session=session, user=user, judge_id=judge_id).name
    except NotFound:
        raise NotFound("No such judge.") from None


def _check_clicks_rater(session: Session, book: Book, rater_id: int) -> str:
    """Return the clicks rater's name; raise NotFound unless it rates this book (which the
    user may see)."""
    rater = session.get(ClickRater, rater_id) if access.valid_id(rater_id) else None
    if rater is None or rater.book_id != book.id:
        raise NotFound("No such clicks rater in this book.")
    return rater.name


def _check_user_rater(session: Session, book: Book, user_id: int) -> None:
    """Raise NotFound unless this user has judged a pair of this book (as an unknown clicks
    rater is): a user who does not exist and one who never rated here get the same answer."""
    judged = (
        session.scalar(
            select(Judgement.id)
            .join(Pair, Pair.id == Judgement.pair_id)
            .where(Pair.book_id == book.id, Judgement.user_id == user_id)
            .limit(1)
        )
        if access.valid_id(user_id)
        else None
    )
    if judged is None:
        raise NotFound("No such rater in this book.")


def _check_bounds(scorer: Scorer, values: Iterable[float]) -> None:
    low, high = rating_bounds(scorer)
    outside = [v for v in values if not low <= v <= high]
    if outside:
        raise Conflict(
            f"{len(outside)} aggregated ratings (e.g. {outside[0]:g}) are outside the case "
            f"scorer's scale [{low:g}, {high:g}]; nothing was changed."
        )


def _remember(
    session: Session, case: Case, book: Book, body: SyncBody, rater_name: str | None
) -> None:
    source = session.get(CaseBookSync, case.id)
    if source is None:
        source = CaseBookSync(case_id=case.id, book_id=book.id, method=body.method)
        session.add(source)
    source.book_id, source.method = book.id, body.method
    rater = body.method == "rater"
    source.rater_id = body.user_id if rater else None
    source.rater_kind = (
        None
        if not rater
        else "clicks"
        if body.clicks_rater_id is not None
        else "judge"
        if body.judge_id is not None
        else "user"
    )
    source.rater_name = rater_name if rater else None
    source.synced_at = utcnow()


def source_read(*, session: Session, case: Case) -> RatingsSource | None:
    """Return where the case's ratings come from, when they were synced from a book."""
    source = session.get(CaseBookSync, case.id)
    book = session.get(Book, source.book_id) if source is not None else None
    if source is None or book is None:
        return None
    rater = session.get(User, source.rater_id) if source.rater_id is not None else None
    return RatingsSource(
        book_id=book.id,
        book_name=book.name,
        method=source.method,
        rater_email=None if rater is None else rater.email,
        rater_kind=_KINDS.get(source.rater_kind or ""),
        rater_name=source.rater_name,
    )
