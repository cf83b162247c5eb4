"""JSON twins of the book pages: the same page-data functions, served as JSON."""

from __future__ import annotations

from fastapi import APIRouter, Query

from app.accounts.deps import CurrentUser
from app.books.deps import BookDep
from app.books.pages import data as book_pages
from app.books.pages.schemas import BookPage, BooksPage, JudgePage
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/pages", tags=["pages"])


def parse_skip(skip: str) -> list[int]:
    """Return the pair ids of a comma-separated `skip` parameter (others are dropped)."""
    return [int(part) for part in skip.split(",") if part.strip().isdigit()][:200]


@router.get("/books", response_model=BooksPage, name="books_page_json")
def books_page(user: CurrentUser, session: SessionDep) -> BooksPage:
    """Return the data of the books list page."""
    return book_pages.books_page(session=session, user=user)


@router.get("/books/{book_id}", response_model=BookPage, name="book_page_json")
def book_page(book: BookDep, user: CurrentUser, session: SessionDep) -> BookPage:
    """Return the data of a book page: agreement, raters, disputed pairs."""
    return book_pages.book_page(session=session, user=user, book=book)


@router.get("/books/{book_id}/judge", response_model=JudgePage, name="judge_page_json")
def judge_page(
    book: BookDep,
    user: CurrentUser,
    session: SessionDep,
    pair_id: int | None = None,
    skip: str = Query(default="", max_length=4000),
) -> JudgePage:
    """Return the data of the judging page: the pair to judge and the rater's progress."""
    return book_pages.judge_page(
        session=session, user=user, book=book, pair_id=pair_id, skip=parse_skip(skip)
    )
