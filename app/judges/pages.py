"""Page data of the judges list, a judge's form, a book's judging page and a judge run."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.bodies import ResponseBody
from app.books.consensus import aggregate
from app.judges import run_views, runs
from app.judges import service as judges
from app.judges.schemas import JudgeRead, JudgeRunRead
from app.judges.titles import pair_title, title_fields
from app.models import (
    Book,
    Judge,
    JudgeFailure,
    JudgeJudgement,
    Judgement,
    JudgeRun,
    Pair,
    User,
)

REVIEW_LIMIT = 50
REVIEW_GAP = 2.0


class BookChoice(ResponseBody):
    id: int
    name: str


class JudgesPage(ResponseBody):
    judges: list[JudgeRead]
    books: list[BookChoice]


class ReviewRow(ResponseBody):
    pair_id: int
    query_text: str
    doc_id: str
    # The document's title from the pair's stored fields (None when they hold none).
    doc_title: str | None = None
    judge_name: str
    judge_rating: float | None
    people_rating: float | None
    reason: str


class JudgingPage(ResponseBody):
    book_id: int
    book_name: str
    judges: list[JudgeRead]
    runs: list[JudgeRunRead]
    review: list[ReviewRow]


def book_choices(*, session: Session, user: User) -> list[BookChoice]:
    """Return the books the user may judge, by name (for the test form)."""
    stmt = (
        select(Book.id, Book.name)
        .where(access.visible_clause(Book, user=user))
        .order_by(Book.name, Book.id)
    )
    return [BookChoice(id=i, name=n) for i, n in session.execute(stmt)]


def judges_page(*, session: Session, user: User) -> JudgesPage:
    """Return the user's judges and the books they could be tried on."""
    return JudgesPage(
        judges=[judges.to_read(j) for j in judges.list_judges(session=session, user=user)],
        books=book_choices(session=session, user=user),
    )


def run_count(*, session: Session, judge: Judge) -> int:
    """Return how many runs the judge has had (on any book)."""
    found = session.scalar(
        select(func.count()).select_from(JudgeRun).where(JudgeRun.judge_id == judge.id)
    )
    return int(found or 0)


def judging_page(*, session: Session, user: User, book: Book) -> JudgingPage:
    """Return a book's judges to choose from, its judge runs and the review queue."""
    mine = judges.list_judges(session=session, user=user)
    names = {j.id: j.name for j in mine}
    priced = {j.id: judges.is_priced(j) for j in mine}
    book_runs = runs.list_runs(session=session, book=book)
    return JudgingPage(
        book_id=book.id,
        book_name=book.name,
        judges=[judges.to_read(j) for j in mine],
        runs=[
            run_views.to_read(
                session=session,
                run=r,
                judge_name=names.get(r.judge_id),
                judge_priced=priced.get(r.judge_id),
            )
            for r in book_runs
        ],
        review=review_queue(session=session, book=book),
    )


class _Flag(NamedTuple):
    """A judge's answer on a pair that the review queue shows, and why."""

    judge_id: int
    pair_id: int
    rating: float | None
    reason: str


def review_queue(*, session: Session, book: Book, limit: int = REVIEW_LIMIT) -> list[ReviewRow]:
    """Return the pairs to look at: a judge 2 or more from the people's majority, or failed."""
    majority = _people_majority(session=session, book=book)
    rated = _judge_ratings(session=session, book=book)
    have = {(judge_id, pair_id) for judge_id, pair_id, _ in rated}
    flags = _disagreements(rated, majority) + _failures(session=session, book=book, rated=have)
    return _review_rows(session=session, book=book, flags=flags[:limit], majority=majority)


def _people_majority(*, session: Session, book: Book) -> dict[int, float | None]:
    """Return the people's majority rating of each pair they rated."""
    people: dict[int, list[float]] = defaultdict(list)
    for pair_id, rating in session.execute(
        select(Judgement.pair_id, Judgement.rating).where(
            Judgement.book_id == book.id, Judgement.rating.is_not(None)
        )
    ):
        people[pair_id].append(float(rating or 0.0))
    return {p: aggregate("majority", sorted(r)) for p, r in people.items()}


def _judge_ratings(*, session: Session, book: Book) -> list[tuple[int, int, float | None]]:
    """Return the judges' ratings of the book's pairs: (judge id, pair id, rating)."""
    stmt = select(JudgeJudgement.judge_id, JudgeJudgement.pair_id, JudgeJudgement.rating).where(
        JudgeJudgement.book_id == book.id, JudgeJudgement.rating.is_not(None)
    )
    return [(judge_id, pair_id, rating) for judge_id, pair_id, rating in session.execute(stmt)]


def _disagreements(
    rated: list[tuple[int, int, float | None]], majority: dict[int, float | None]
) -> list[_Flag]:
    """Return the ratings that are REVIEW_GAP or more from the people's majority."""
    flags = []
    for judge_id, pair_id, rating in rated:
        said = majority.get(pair_id)
        if said is not None and abs(float(rating or 0.0) - said) >= REVIEW_GAP:
            flags.append(_Flag(judge_id, pair_id, rating, "disagrees with the people by 2 or more"))
    return flags


def _failures(*, session: Session, book: Book, rated: set[tuple[int, int]]) -> list[_Flag]:
    """Return the latest failure of each judge and pair not among ``rated``."""
    failed = session.execute(
        select(JudgeFailure.judge_id, JudgeFailure.pair_id, JudgeFailure.reason)
        .join(Pair, Pair.id == JudgeFailure.pair_id)
        .where(Pair.book_id == book.id)
        .order_by(JudgeFailure.id.desc())
    )
    have = set(rated)
    flags = []
    for judge_id, pair_id, reason in failed:
        if (judge_id, pair_id) not in have:  # a later run may have rated it
            have.add((judge_id, pair_id))
            flags.append(_Flag(judge_id, pair_id, None, f"failed: {reason}"))
    return flags


def _review_rows(
    *, session: Session, book: Book, flags: list[_Flag], majority: dict[int, float | None]
) -> list[ReviewRow]:
    """Return the rows shown for these flags, with their pair and judge (gone pairs left out)."""
    pairs = _pairs_by_id(session=session, pair_ids={f.pair_id for f in flags})
    fields = title_fields(session=session, book_id=book.id) if pairs else []
    names = _book_judge_names(session=session, book=book)
    return [
        ReviewRow(
            pair_id=f.pair_id,
            query_text=pairs[f.pair_id].query_text,
            doc_id=pairs[f.pair_id].doc_id,
            doc_title=pair_title(pairs[f.pair_id].fields, fields),
            judge_name=names.get(f.judge_id, f"judge {f.judge_id}"),
            judge_rating=f.rating,
            people_rating=majority.get(f.pair_id),
            reason=f.reason,
        )
        for f in flags
        if f.pair_id in pairs
    ]


def _pairs_by_id(*, session: Session, pair_ids: set[int]) -> dict[int, Pair]:
    """Return these pairs by id (those still in the database)."""
    return {p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_(pair_ids)))}


def _book_judge_names(*, session: Session, book: Book) -> dict[int, str]:
    """Return the names of the judges that judged the book's pairs, by judge id."""
    judge_ids = session.scalars(
        select(JudgeJudgement.judge_id).where(JudgeJudgement.book_id == book.id).distinct()
    )
    return judges.judge_names(session=session, judge_ids=list(judge_ids))
