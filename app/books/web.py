"""Book pages: the books list, a book (agreement, forms) and the judging page for raters."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.accounts.deps import WebUser
from app.books import io as book_io
from app.books import service as book_service
from app.books import sync as book_sync
from app.books.api.pages import parse_skip
from app.books.deps import WebBookDep
from app.books.pages import data as book_pages
from app.books.schemas import BookCreate, JudgementPut, Populate, SyncBody
from app.errors import Conflict, Invalid
from app.models import Book, User
from app.web_common.confirm import DeleteConfirmation, confirm_page, gone
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text, parse_body
from app.web_common.html_errors import HtmlErrorRoute, error_page
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/books", name="books_page")
def books_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show the books the user may see, with forms to create and import one."""
    data = book_pages.books_page(session=session, user=user)
    return render(request, "books/books.html", {"user": user, "page": data, "errors": {}})


@router.post("/books", name="book_create_submit")
def create_book(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a book from the form (scale as comma-separated values) and open it."""
    scale = [v.strip() for v in field_text(form, "scale").split(",") if v.strip()]
    try:
        body = parse_body(BookCreate, {"name": field_text(form, "name"), "scale": scale})
    except FormErrors as exc:
        data = book_pages.books_page(session=session, user=user)
        return render(
            request, "books/books.html", {"user": user, "page": data, "errors": exc.errors}, 422
        )
    book = book_service.create_book(session=session, user=user, body=body)
    return see_other(request.url_for("book_page", book_id=book.id))


@router.post("/books/import", name="book_import_submit")
async def import_book(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a book from an uploaded Quepid book JSON file."""
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return error_page(request, 422, "Choose a Quepid book JSON file to import.")
    try:
        data = json.loads(await upload.read())
        book = book_io.import_quepid(session=session, user=user, data=data)
    except (ValueError, UnicodeDecodeError):
        return error_page(request, 422, "The file is not valid JSON.")
    except Invalid as exc:
        return error_page(request, 422, exc.message)
    return see_other(request.url_for("book_page", book_id=book.id))


@router.get("/books/{book_id}", name="book_page")
def book_page(request: Request, book: WebBookDep, user: WebUser, session: SessionDep) -> Response:
    """Show a book: agreement, raters' counts, the most disputed pairs and its forms.

    After a fill or a sync the address says what it did and what was chosen: the page says
    it under that form, with the form's fields as they were.
    """
    return _book(request, user, session, book, _outcome(request.query_params))


# What a fill or a sync puts in the address of the page it redirects to.
_OUTCOME_KEYS = (
    "populate_case",
    "depth",
    "added",
    "existing",
    "sync_case",
    "method",
    "rater",
    "set",
    "unchanged",
    "without",
)


def _outcome(params: Mapping[str, str]) -> dict[str, str]:
    """Keep the outcome's values that are what a fill or a sync writes (short words, numbers)."""
    return {
        key: params[key]
        for key in _OUTCOME_KEYS
        if key in params and re.fullmatch(r"[a-z0-9]{1,20}", params[key])
    }


def _book(
    request: Request,
    user: User,
    session: Session,
    book: Book,
    outcome: dict[str, str],
    status_code: int = 200,
) -> Response:
    data = book_pages.book_page(session=session, user=user, book=book)
    names = {str(c.id): c.name for c in data.cases}
    context = {"user": user, "page": data, "outcome": outcome, "case_names": names}
    return render(request, "books/book.html", context, status_code=status_code)


@router.get("/books/{book_id}/delete", name="book_delete_page")
def confirm_book(
    request: Request, book: WebBookDep, user: WebUser, session: SessionDep
) -> Response:
    """Ask before deleting a book, saying how many pairs and ratings go with it."""
    pairs = book_service.pair_counts(session=session, book_ids=[book.id])[book.id]
    doomed = DeleteConfirmation(
        kind="book",
        name=book.name,
        consequence=(
            f"Its {pairs} {'pair' if pairs == 1 else 'pairs'}, every rating people and judges "
            "gave them and its judge runs are deleted with it; cases synced from it keep "
            "the ratings they were given."
        ),
        action=str(request.url_for("book_delete_submit", book_id=book.id)),
        back=str(request.url_for("book_page", book_id=book.id)),
    )
    return confirm_page(request, user, doomed)


@router.post("/books/{book_id}/delete", name="book_delete_submit")
def delete_book(
    request: Request, book: WebBookDep, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Delete a book (its owner only: 403 page otherwise) and go back to the books."""
    book_service.delete_book(session=session, user=user, book=book)
    return gone(request, str(request.url_for("books_page")))


@router.post("/books/{book_id}/populate", name="book_populate_submit")
def populate(
    request: Request,
    book: WebBookDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Fill the book from a case's latest finished run; the book page says what was added."""
    chosen = {
        "populate_case": field_text(form, "case_id")[:20],
        "depth": field_text(form, "depth")[:20] or "10",
    }
    try:
        body = Populate.model_validate(
            {"case_id": chosen["populate_case"], "depth": chosen["depth"]}
        )
    except ValidationError:
        problem = "Choose a case and a depth from 1 to 500."
        return _book(request, user, session, book, {**chosen, "populate_problem": problem}, 422)
    try:
        added, existing = book_service.populate(
            session=session, user=user, book=book, case_id=body.case_id, depth=body.depth
        )
    except Conflict as exc:
        return _book(request, user, session, book, {**chosen, "populate_problem": exc.message}, 409)
    url = request.url_for("book_page", book_id=book.id).include_query_params(
        **chosen, added=added, existing=existing
    )
    return see_other(f"{url}#populate-done")


@router.post("/books/{book_id}/sync", name="book_sync_submit")
def sync(
    request: Request,
    book: WebBookDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Sync the book into a case; the book page says what was written, with a link to it."""
    rater = field_text(form, "user_id").strip()
    chosen = {
        "sync_case": field_text(form, "case_id")[:20],
        "method": field_text(form, "method")[:20],
        "rater": rater[:20],
    }
    try:
        body = SyncBody.model_validate(
            {"method": field_text(form, "method"), "user_id": rater or None}
        )
        case_id = int(field_text(form, "case_id"))
    except (ValidationError, ValueError):
        problem = "Choose a case and a method (and a rater for 'rater')."
        return _book(request, user, session, book, {**chosen, "sync_problem": problem}, 422)
    try:
        done = book_sync.sync(session=session, case_id=case_id, book=book, body=body, user=user)
    except (Invalid, Conflict) as exc:
        failed = {**chosen, "sync_problem": exc.message}
        return _book(request, user, session, book, failed, exc.status_code)
    url = request.url_for("book_page", book_id=book.id).include_query_params(
        **chosen,
        set=done.ratings_set,
        unchanged=done.ratings_unchanged,
        without=done.pairs_without_query,
    )
    return see_other(f"{url}#sync-done")


@router.get("/books/{book_id}/judge", name="judge_page")
def judge_page(
    request: Request,
    book: WebBookDep,
    user: WebUser,
    session: SessionDep,
    pair_id: int | None = None,
    skip: str = Query(default="", max_length=4000),
) -> Response:
    """Show one pair to judge: query, information need, doc fields and the scale as buttons."""
    data = book_pages.judge_page(
        session=session, user=user, book=book, pair_id=pair_id, skip=parse_skip(skip)
    )
    return render(request, "books/judge.html", {"user": user, "page": data})


@router.post("/books/{book_id}/judge", name="judge_submit")
def judge(
    request: Request,
    book: WebBookDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Record the rater's judgement of the pair, then show the next pair."""
    unrateable = field_text(form, "unrateable") == "1"
    raw = field_text(form, "rating").strip()
    try:
        pair_id = int(field_text(form, "pair_id"))
        body = JudgementPut(rating=None if unrateable else float(raw), unrateable=unrateable)
    except (ValueError, ValidationError):
        return error_page(request, 422, 'Choose a rating from the scale, or "can\'t tell".')
    try:
        book_service.judge(session=session, book=book, pair_id=pair_id, user=user, body=body)
    except Invalid as exc:
        return error_page(request, 422, exc.message)
    target = request.url_for("judge_page", book_id=book.id)
    skip = field_text(form, "skip")
    if skip:
        target = target.include_query_params(skip=skip)
    return see_other(target)
