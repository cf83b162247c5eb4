"""Page data of the judges list, a judge's form, a book's judging page and a judge run."""

from __future__ import annotations

from collections import defaultdict

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


def review_queue(*, session: Session, book: Book, limit: int = REVIEW_LIMIT) -> list[ReviewRow]:
    """Return the pairs to look at: a judge 2 or more from the people's majority, or failed."""
    people: dict[int, list[float]] = defaultdict(list)
    for pair_id, rating in session.execute(
        select(Judgement.pair_id, Judgement.rating).where(
            Judgement.book_id == book.id, Judgement.rating.is_not(None)
        )
    ):
        people[pair_id].append(float(rating or 0.0))
    majority = {p: aggregate("majority", sorted(r)) for p, r in people.items()}
    names = judges.judge_names(
        session=session,
        judge_ids=list(
            session.scalars(
                select(JudgeJudgement.judge_id).where(JudgeJudgement.book_id == book.id).distinct()
            )
        ),
    )
    rows: list[tuple[int, int, float | None, str]] = []
    have: set[tuple[int, int]] = set()
    for judge_id, pair_id, rating in session.execute(
        select(JudgeJudgement.judge_id, JudgeJudgement.pair_id, JudgeJudgement.rating).where(
            JudgeJudgement.book_id == book.id, JudgeJudgement.rating.is_not(None)
        )
    ):
        have.add((judge_id, pair_id))
        said = majority.get(pair_id)
        if said is not None and abs(float(rating or 0.0) - said) >= REVIEW_GAP:
            rows.append((judge_id, pair_id, rating, "disagrees with the people by 2 or more"))
    failed = session.execute(
        select(JudgeFailure.judge_id, JudgeFailure.pair_id, JudgeFailure.reason)
        .join(Pair, Pair.id == JudgeFailure.pair_id)
        .where(Pair.book_id == book.id)
        .order_by(JudgeFailure.id.desc())
    )
    for judge_id, pair_id, reason in failed:
        if (judge_id, pair_id) not in have:  # a later run may have rated it
            have.add((judge_id, pair_id))
            rows.append((judge_id, pair_id, None, f"failed: {reason}"))
    rows = rows[:limit]
    pairs = {
        p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_({r[1] for r in rows})))
    }
    fields = title_fields(session=session, book_id=book.id) if pairs else []
    return [
        ReviewRow(
            pair_id=pair_id,
            query_text=pairs[pair_id].query_text,
            doc_id=pairs[pair_id].doc_id,
            doc_title=pair_title(pairs[pair_id].fields, fields),
            judge_name=names.get(judge_id, f"judge {judge_id}"),
            judge_rating=rating,
            people_rating=majority.get(pair_id),
            reason=reason,
        )
        for judge_id, pair_id, rating, reason in rows
        if pair_id in pairs
    ]
