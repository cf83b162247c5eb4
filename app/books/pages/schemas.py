"""Page models of the books list, a book page and the judging page."""

from __future__ import annotations

from app.bodies import ResponseBody
from app.books.schemas import AgreementRead, BookRead, JudgementRead, PairToJudge
from app.scorers.schemas import ScaleEntry


class CaseChoice(ResponseBody):
    id: int
    name: str


class BooksPage(ResponseBody):
    books: list[BookRead]


class RaterRow(ResponseBody):
    user_id: int
    email: str
    judged: int
    unrateable: int


class KappaRow(ResponseBody):
    a: str
    b: str
    n: int
    kappa: float | None


class DisputedRow(ResponseBody):
    pair_id: int
    query_text: str
    doc_id: str
    # The document's title from the pair's stored fields (None when they hold none).
    doc_title: str | None = None
    ratings: list[float]
    spread: float


class BookPage(ResponseBody):
    book: BookRead
    scale: list[ScaleEntry]
    agreement: AgreementRead
    kappas: list[KappaRow]
    raters: list[RaterRow]
    disputed: list[DisputedRow]
    cases: list[CaseChoice]
    judged_by_me: int


class JudgePage(ResponseBody):
    book: BookRead
    scale: list[ScaleEntry]
    pair: PairToJudge | None
    mine: JudgementRead | None
    judged_by_me: int
    total: int
    previous_pair_id: int | None
    skip: list[int]
