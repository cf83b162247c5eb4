"""Page data of the books list, a book page and the judging page (HTML and JSON alike)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import access
from app.books import agreement as agreement_service
from app.books import calibration
from app.books import service as book_service
from app.books.pages.schemas import (
    BookPage,
    BooksPage,
    CaseChoice,
    DisputedRow,
    JudgePage,
    KappaRow,
    RaterRow,
)
from app.books.schemas import BookRead, JudgementRead, PairToJudge
from app.models import Book, Case, User
from app.scorers.service import scale_entries

MAX_SKIPS = 200


def books_page(*, session: Session, user: User) -> BooksPage:
    """Return the books the user may see with their pair counts."""
    books = book_service.list_books(session=session, user=user)
    counts = book_service.pair_counts(session=session, book_ids=[b.id for b in books])
    return BooksPage(
        books=[
            BookRead.model_validate(b).model_copy(update={"pair_count": counts[b.id]})
            for b in books
        ]
    )


def book_page(*, session: Session, user: User, book: Book) -> BookPage:
    """Return a book's agreement, per-rater counts, most disputed pairs and the user's cases."""
    agreement = calibration.agreement(session=session, book=book)
    raters = agreement_service.rater_counts(session=session, book=book)
    emails = {r.user_id: r.email for r in raters}
    cases = session.execute(
        select(Case.id, Case.name)
        .where(access.visible_clause(Case, user=user))
        .order_by(Case.name, Case.id)
    )
    judged, _total = book_service.progress(session=session, book=book, user=user)
    return BookPage(
        book=book_service.to_read(session=session, book=book),
        scale=scale_entries(book),
        agreement=agreement,
        kappas=[
            KappaRow(a=emails.get(k.a, str(k.a)), b=emails.get(k.b, str(k.b)), n=k.n, kappa=k.kappa)
            for k in agreement.cohen_kappa
        ],
        raters=[RaterRow.model_validate(r) for r in raters],
        disputed=[
            DisputedRow.model_validate(d)
            for d in agreement_service.disputed_pairs(session=session, book=book)
        ],
        cases=[CaseChoice(id=i, name=n) for i, n in cases],
        judged_by_me=judged,
    )


def judge_page(
    *,
    session: Session,
    user: User,
    book: Book,
    pair_id: int | None = None,
    skip: Sequence[int] = (),
) -> JudgePage:
    """Return the pair to judge (the asked one, else the next for this rater) and progress."""
    skipped = list(dict.fromkeys(skip))[:MAX_SKIPS]
    pair = (
        book_service.get_pair(session=session, book=book, pair_id=pair_id)
        if pair_id is not None
        else book_service.next_pair(session=session, book=book, user=user, skip=skipped)
    )
    mine = book_service.my_judgement(session=session, pair=pair, user=user) if pair else None
    previous = book_service.previous_pair(
        session=session, book=book, user=user, before=pair.id if pair and mine else None
    )
    judged, total = book_service.progress(session=session, book=book, user=user)
    return JudgePage(
        book=book_service.to_read(session=session, book=book),
        scale=scale_entries(book),
        pair=None if pair is None else PairToJudge.model_validate(pair),
        mine=None if mine is None else JudgementRead.model_validate(mine),
        judged_by_me=judged,
        total=total,
        previous_pair_id=None if previous is None else previous.id,
        skip=skipped,
    )
