"""The cases list and the case page with its partials (score, query list, runs, history)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.datastructures import FormData

from app.deps import SessionDep, WebUser
from app.errors import Invalid
from app.models import User
from app.schemas.cases import BulkQueries, CaseCreate, CaseUpdate
from app.schemas.pages import QUERY_SORTS, CasePage, CasesPage, QuerySort
from app.search import DEFAULT_FIELD_SPEC
from app.services import case_pages, case_updates
from app.services import cases as case_service
from app.services import queries as query_service
from app.services import runs as run_service
from app.services.endpoints import DEFAULT_TEMPLATES
from app.services.run_manager import RunManager
from app.vocabulary import ACTIVE_RUN_STATUSES, Engine
from app.web.deps import FormDep, WebCaseDep
from app.web.errors import HtmlErrorRoute
from app.web.forms import CsrfChecked, FormErrors, field_text, form_errors, parse_body
from app.web.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)

KNOB_PREFIX = "knob."


def _sort(value: str) -> QuerySort:
    return value if value in QUERY_SORTS else "position"


CASE_FORM_FIELDS = (
    "name",
    "search_endpoint_id",
    "query_template",
    "field_spec",
    "rows",
    "scorer_id",
)


@router.get("/", name="cases_page")
def cases_page(request: Request, user: WebUser, session: SessionDep, show: str = "all") -> Response:
    """Show the user's cases (all, mine or one team's) with their scores, and the new-case form."""
    data = case_pages.cases_page(session=session, user=user, show=show)
    return _render_cases(request, user, data, _new_case_defaults(data), {})


def _new_case_defaults(data: CasesPage) -> dict[str, Any]:
    engine = data.endpoints[0].engine if data.endpoints else Engine.OPENSEARCH
    return {
        "name": "",
        "search_endpoint_id": "",
        "query_template": DEFAULT_TEMPLATES[engine],
        "field_spec": DEFAULT_FIELD_SPEC,
        "rows": "10",
        "scorer_id": str(data.default_scorer_id or ""),
    }


def _render_cases(
    request: Request,
    user: User,
    data: CasesPage,
    form: dict[str, Any],
    errors: dict[str, str],
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "cases.html",
        {"user": user, "page": data, "form": form, "errors": errors},
        status_code=status_code,
    )


@router.post("/cases", name="case_create_submit")
def create_case(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a case from the form and open it; a bad field re-renders the form (422)."""
    values = {name: field_text(form, name) for name in CASE_FORM_FIELDS}
    data = case_pages.cases_page(session=session, user=user)
    try:
        body = parse_body(CaseCreate, _case_create_values(values, data))
        case = case_service.create_case(session=session, user=user, body=body)
    except (FormErrors, Invalid) as exc:
        session.rollback()
        errors = form_errors(exc)
        return _render_cases(request, user, data, values, errors, status_code=422)
    return RedirectResponse(str(request.url_for("case_page", case_id=case.id)), status_code=303)


def _case_create_values(values: dict[str, str], data: CasesPage) -> dict[str, Any]:
    result: dict[str, Any] = {k: v.strip() for k, v in values.items() if v.strip()}
    result["query_template"] = values["query_template"].strip()
    if not result["query_template"]:
        engines = {str(e.id): e.engine for e in data.endpoints}
        engine = engines.get(values["search_endpoint_id"])
        if engine is not None:
            result["query_template"] = DEFAULT_TEMPLATES[engine]
    return result


@router.get("/cases/{case_id}", name="case_page")
def case_page(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    sort: str = "position",
    q: str = "",
    page: int = 1,
) -> Response:
    """Show a case: score, run button, the query list, settings and history."""
    data = case_pages.case_page(
        session=session, user=user, case=case, sort=_sort(sort), q=q, page=page
    )
    return _render_case(request, user, data, _settings_values(data), {})


def _settings_values(data: CasePage) -> dict[str, Any]:
    current = data.current_try
    return {
        "name": data.case.name,
        "search_endpoint_id": str(current.search_endpoint_id),
        "query_template": current.query_template,
        "field_spec": current.field_spec,
        "rows": str(current.rows),
        "scorer_id": str(data.case.scorer_id),
        "knobs": {name: f"{value:g}" for name, value in current.knobs.items()},
    }


def _render_case(
    request: Request,
    user: User,
    data: CasePage,
    settings: dict[str, Any],
    errors: dict[str, str],
    status_code: int = 200,
    queries_text: str = "",
    queries_error: str | None = None,
) -> Response:
    context = {
        "user": user,
        "page": data,
        "settings": settings,
        "errors": errors,
        "queries_text": queries_text,
        "queries_error": queries_error,
        "sort_labels": case_pages.QUERY_SORT_LABELS,
    }
    return render(request, "case.html", context, status_code=status_code)


@router.post("/cases/{case_id}/settings", name="case_settings_submit")
def save_settings(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save the case settings (new search settings make a new try); errors re-render (422)."""
    values = _settings_from_form(form)
    try:
        body = parse_body(CaseUpdate, _case_update_values(values))
        case_updates.update_case(session=session, user=user, case=case, body=body)
    except (FormErrors, Invalid) as exc:
        session.rollback()
        errors = form_errors(exc)
        data = case_pages.case_page(session=session, user=user, case=case)
        return _render_case(request, user, data, values, errors, status_code=422)
    return RedirectResponse(str(request.url_for("case_page", case_id=case.id)), status_code=303)


def _settings_from_form(form: FormData) -> dict[str, Any]:
    values: dict[str, Any] = {name: field_text(form, name) for name in CASE_FORM_FIELDS}
    values["knobs"] = {
        key.removeprefix(KNOB_PREFIX): field_text(form, key)
        for key in form
        if key.startswith(KNOB_PREFIX)
    }
    return values


def _case_update_values(values: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        k: v.strip()
        for k, v in values.items()
        if k not in ("knobs", "query_template") and v.strip()
    }
    result["query_template"] = values["query_template"].strip() or None
    result["knobs"] = {k: v.strip() for k, v in values["knobs"].items() if v.strip()}
    return result


@router.post("/cases/{case_id}/queries", name="case_add_queries")
def add_queries(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add the pasted queries, one per line."""
    text = field_text(form, "queries")
    try:
        body = parse_body(BulkQueries, {"queries": text.splitlines()})
    except FormErrors as exc:
        data = case_pages.case_page(session=session, user=user, case=case)
        return _render_case(
            request,
            user,
            data,
            _settings_values(data),
            {},
            status_code=422,
            queries_text=text,
            queries_error=next(iter(exc.errors.values())),
        )
    query_service.add_queries(session=session, case=case, texts=body.queries)
    return RedirectResponse(str(request.url_for("case_page", case_id=case.id)), status_code=303)


@router.post("/cases/{case_id}/runs", name="case_run")
def start_run(
    request: Request, case: WebCaseDep, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Start a run; htmx gets the live progress bar, a plain form goes back to the case."""
    run = run_service.create_run(session=session, case=case)
    manager: RunManager = request.app.state.run_manager
    manager.submit(run.id)
    if is_htmx(request):
        return render(
            request,
            "partials/run_progress.html",
            {"run": run_service.summary(run), "case_id": case.id},
        )
    return RedirectResponse(str(request.url_for("case_page", case_id=case.id)), status_code=303)


@router.post("/cases/{case_id}/runs/{run_id}/cancel", name="run_cancel_submit")
def cancel_run(
    request: Request, run_id: int, case: WebCaseDep, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Cancel a run; htmx gets the progress bar back, a plain form goes back to the case."""
    run = run_service.get_run(session=session, case=case, run_id=run_id)
    if run.status in ACTIVE_RUN_STATUSES:  # a run that ended meanwhile is simply shown
        run = run_service.cancel_run(session=session, run=run)
        request.app.state.run_manager.cancelled(run.id)
    if is_htmx(request):
        return render(
            request,
            "partials/run_progress.html",
            {"run": run_service.summary(run), "case_id": case.id},
            headers={"HX-Trigger": "run-finished"},
        )
    return RedirectResponse(str(request.url_for("case_page", case_id=case.id)), status_code=303)


@router.get("/cases/{case_id}/runs/{run_id}/progress", name="run_progress_partial")
def run_progress(request: Request, run_id: int, case: WebCaseDep, session: SessionDep) -> Response:
    """Return the progress bar of a run; when it ends, tell the page to refresh its parts."""
    run = run_service.summary(run_service.get_run(session=session, case=case, run_id=run_id))
    ended = run.status not in ACTIVE_RUN_STATUSES
    headers = {"HX-Trigger": "run-finished"} if ended else None
    return render(
        request, "partials/run_progress.html", {"run": run, "case_id": case.id}, headers=headers
    )


@router.get("/cases/{case_id}/score", name="case_score_partial")
def case_score(request: Request, case: WebCaseDep, session: SessionDep) -> Response:
    """Return the case score panel."""
    return render(
        request,
        "partials/case_score.html",
        {"score": case_pages.case_score(session=session, case=case)},
    )


@router.get("/cases/{case_id}/query-list", name="query_list_partial")
def query_list(
    request: Request,
    case: WebCaseDep,
    session: SessionDep,
    sort: str = "position",
    q: str = "",
    page: int = 1,
) -> Response:
    """Return one page of the query list."""
    queries = case_pages.case_query_list(
        session=session, case=case, sort=_sort(sort), q=q, page=page
    )
    return render(request, "partials/query_list.html", {"case": case, "queries": queries})


@router.get("/cases/{case_id}/history", name="case_history_partial")
def case_history(request: Request, case: WebCaseDep, session: SessionDep) -> Response:
    """Return the score chart and the runs table."""
    return render(
        request,
        "partials/history.html",
        {"history": case_pages.case_history(session=session, case=case)},
    )
