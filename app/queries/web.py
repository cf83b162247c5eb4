"""A query's results and rating them, as a page (no JavaScript) and as htmx fragments."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.cases.pages import score_panel
from app.errors import Invalid
from app.models import Query
from app.queries import flows as rating_service
from app.queries import service as query_service
from app.queries.deps import WebQueryDep
from app.queries.forms import NotesForm
from app.queries.pages import rated_missing as missing_service
from app.queries.pages import results as result_service
from app.queries.schemas import RatingIn
from app.web_common.confirm import DeleteConfirmation, confirm_page, gone
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text
from app.web_common.html_errors import HtmlErrorRoute, error_page
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/cases/{case_id}/queries/{query_id}", name="query_page")
def query_page(
    request: Request, case: WebCaseDep, query: WebQueryDep, user: WebUser, session: SessionDep
) -> Response:
    """Show one query's results with rating buttons (the page behind an expanded query)."""
    results = result_service.query_results(session=session, case=case, query=query)
    score = score_panel.case_score(session=session, case=case)
    return render(
        request,
        "queries/query.html",
        {"user": user, "case": case, "results": results, "score": score},
    )


@router.get("/cases/{case_id}/queries/{query_id}/results", name="query_results_partial")
def query_results(
    request: Request, case: WebCaseDep, query: WebQueryDep, session: SessionDep
) -> Response:
    """Return the fragment of one query's results, loaded when the query is expanded."""
    results = result_service.query_results(session=session, case=case, query=query)
    return render(request, "queries/partials/query_results.html", {"results": results})


@router.get("/cases/{case_id}/queries/{query_id}/rated-missing", name="query_rated_missing")
async def rated_missing(
    request: Request, case: WebCaseDep, query: WebQueryDep, session: SessionDep
) -> Response:
    """Return the fragment listing rated docs the latest run did not return, fetched by id."""
    # The database is read off the event loop; the engine is asked on it.
    lookup = await run_in_threadpool(
        missing_service.plan_rated_missing, session=session, case=case, query=query
    )
    missing = await missing_service.fetch_rated_missing(lookup)
    return render(request, "queries/partials/rated_missing.html", {"missing": missing})


@router.post("/cases/{case_id}/queries/{query_id}/ratings", name="query_rate")
def rate(
    request: Request,
    case: WebCaseDep,
    query: WebQueryDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Rate one doc (an empty rating clears it) and re-score the query, as the API does."""
    doc_id = field_text(form, "doc_id")
    raw = field_text(form, "rating").strip()
    try:
        rating = float(raw) if raw else None
    except ValueError:
        rating = math.nan
    if not doc_id or len(doc_id) > 500 or (rating is not None and not math.isfinite(rating)):
        return error_page(request, 422, "Choose a rating from the scale for a document.")
    try:
        rated = rating_service.rate(
            session=session,
            case=case,
            query=query,
            user=user,
            ratings=[RatingIn(doc_id=doc_id, rating=rating)],
        )
    except Invalid as exc:
        return error_page(request, 422, exc.message)
    if not is_htmx(request):
        target = request.url_for("query_page", case_id=case.id, query_id=query.id)
        return see_other(f"{target}#results-{query.id}")
    results = result_service.results_of(
        session=session,
        case=case,
        query=query,
        run=rated.run,
        row=rated.row,
        ratings=rated.ratings,
        raters=rated.raters,
        chosen=rated.chosen,
    )
    score = score_panel.score_of(case_id=case.id, run=rated.run)
    # Rating a doc listed under "rated but not returned" keeps that list open.
    missing_open = field_text(form, "open_missing") == "1"
    # The history table shows the latest run's score, which the rating just changed.
    return render(
        request,
        "queries/partials/rated.html",
        {"results": results, "score": score, "missing_open": missing_open},
        headers={"HX-Trigger": "case-rescored"},
    )


@router.post("/cases/{case_id}/queries/{query_id}/notes", name="query_notes_submit")
def save_notes(
    request: Request,
    case: WebCaseDep,
    query: WebQueryDep,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save the query's information need and notes (blank clears); re-render the editor."""
    notes = NotesForm.read(form)
    try:
        body = notes.body()
    except FormErrors:
        if not is_htmx(request):
            return error_page(request, 422, " ".join(notes.errors.values()))
        return _notes(
            request, case.id, query, values=notes.values, errors=notes.errors, status_code=422
        )
    query_service.update_query(session=session, case=case, query=query, body=body)
    if not is_htmx(request):
        target = request.url_for("query_page", case_id=case.id, query_id=query.id)
        return see_other(target)
    return _notes(request, case.id, query, saved=True)


def _notes(
    request: Request,
    case_id: int,
    query: Query,
    *,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    saved: bool = False,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "queries/partials/query_notes.html",
        {
            "case_id": case_id,
            "note": query,
            "notes_values": values,
            "notes_errors": errors,
            "notes_saved": saved,
            "notes_open": True,
        },
        status_code=status_code,
    )


@router.get("/cases/{case_id}/queries/{query_id}/delete", name="query_delete_page")
def confirm_query(
    request: Request, case: WebCaseDep, query: WebQueryDep, user: WebUser
) -> Response:
    """Ask before deleting a query."""
    doomed = DeleteConfirmation(
        kind="query",
        name=query.text,
        consequence="Its ratings are deleted with it; past runs keep their copy of its results.",
        action=str(request.url_for("query_delete_submit", case_id=case.id, query_id=query.id)),
        back=str(request.url_for("query_page", case_id=case.id, query_id=query.id)),
    )
    return confirm_page(request, user, doomed)


@router.post("/cases/{case_id}/queries/{query_id}/delete", name="query_delete_submit")
def delete_query(
    request: Request,
    case: WebCaseDep,
    query: WebQueryDep,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Delete a query and go back to its case."""
    query_service.delete_query(session=session, query=query)
    return gone(request, str(request.url_for("case_page", case_id=case.id)))
