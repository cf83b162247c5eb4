"""The cases list and the case page with its partials (score, query list, history)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.accounts.deps import WebUser
from app.cases import flows
from app.cases import service as case_service
from app.cases.deps import WebCaseDep
from app.cases.forms import CaseChoices, CaseSettingsForm, NewCaseForm, QueriesForm
from app.cases.pages import cases_list, score_panel
from app.cases.pages import data as case_pages
from app.cases.pages.query_list import QUERY_SORT_LABELS, case_query_list
from app.cases.pages.schemas import QUERY_SORTS, CasePage, CasesPage, QuerySort
from app.endpoints import service as endpoint_service
from app.endpoints.service import DEFAULT_TEMPLATES
from app.errors import Invalid
from app.models import Case, User
from app.queries import service as query_service
from app.scorers import service as scorer_service
from app.search import DEFAULT_FIELD_SPEC
from app.vocabulary import Engine
from app.web_common.deleting import Deletable, Farewell, add_delete_routes
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, WebForm
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)


def _metric(value: str) -> int | None:
    """Return the metric (scorer id) a link asks to sort by; anything else means the primary."""
    return int(value) if value.isdigit() and len(value) < 10 else None


def _sort(value: str) -> QuerySort:
    return value if value in QUERY_SORTS else "position"


class ListView(TypedDict):
    """How the query list is shown: its sort, text filter, page, tag and metric."""

    sort: QuerySort
    q: str
    page: int
    tag: str
    metric: int | None


def list_view(
    sort: str = "position", q: str = "", page: int = 1, tag: str = "", metric: str = ""
) -> ListView:
    """Return the query list's view from the page's address (unknown sort or metric: default)."""
    return ListView(sort=_sort(sort), q=q, page=page, tag=tag, metric=_metric(metric))


ListViewDep = Annotated[ListView, Depends(list_view)]


@router.get("/", name="cases_page")
def cases_page(request: Request, user: WebUser, session: SessionDep, show: str = "all") -> Response:
    """Show the user's cases (all, mine or one team's) with their scores, and the new-case form."""
    data = cases_list.cases_page(session=session, user=user, show=show)
    return _render_cases(request, user, data, new_case_form(data))


def new_case_form(data: CasesPage) -> NewCaseForm:
    """Return the new-case form as the cases list first shows it."""
    # The endpoint list starts on its first endpoint, so the template starts as its default.
    first = data.endpoints[0] if data.endpoints else None
    return NewCaseForm(
        {
            "name": "",
            "search_endpoint_id": "",
            "query_template": DEFAULT_TEMPLATES[Engine.OPENSEARCH]
            if first is None
            else first.default_template,
            "field_spec": DEFAULT_FIELD_SPEC,
            "rows": "10",
            "scorer_id": str(data.default_scorer_id or ""),
        }
    )


def _render_cases(
    request: Request, user: User, data: CasesPage, form: NewCaseForm, status_code: int = 200
) -> Response:
    context = {"user": user, "page": data, "form": form.values, "errors": form.errors}
    return render(request, "cases/cases.html", context, status_code=status_code)


@router.post("/cases", name="case_create_submit")
def create_case(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create a case from the form and open it; a bad field re-renders the form (422)."""
    data = cases_list.cases_page(session=session, user=user)
    new = NewCaseForm.read(form)
    choices = CaseChoices(
        engines={str(e.id): e.engine for e in data.endpoints},
        scorer_ids=frozenset(str(s.id) for s in data.scorers),
        templates={str(e.id): e.default_template for e in data.endpoints},
    )
    try:
        body = new.body(choices)
        case = case_service.create_case(session=session, user=user, body=body)
    except (FormErrors, Invalid) as exc:
        return _render_cases(request, user, data, new.add(exc), status_code=422)
    return see_other(request.url_for("case_page", case_id=case.id))


@router.get("/cases/{case_id}", name="case_page")
def case_page(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep, view: ListViewDep
) -> Response:
    """Show a case: score, run button, the query list, settings and history."""
    data = case_pages.case_page(session=session, user=user, case=case, **view)
    saved = request.query_params.get("saved", "")
    return _render_case(request, user, data, saved=saved)


def _settings_form(data: CasePage) -> CaseSettingsForm:
    current = data.current_try
    return CaseSettingsForm(
        {
            "name": data.case.name,
            "search_endpoint_id": str(current.search_endpoint_id),
            "query_template": current.query_template,
            "field_spec": current.field_spec,
            "rows": str(current.rows),
            "scorer_id": str(data.case.scorer_id),
            "knobs": {name: f"{value:g}" for name, value in current.knobs.items()},
        }
    )


def _render_case(
    request: Request,
    user: User,
    data: CasePage,
    *,
    settings: CaseSettingsForm | None = None,
    queries: QueriesForm | None = None,
    sweep: WebForm | None = None,
    tags: WebForm | None = None,
    saved: str = "",
    status_code: int = 200,
) -> Response:
    settings = settings or _settings_form(data)
    queries = queries or QueriesForm({"queries": ""})
    context = {
        "user": user,
        "page": data,
        "settings": settings.values,
        "errors": settings.errors,
        "queries_text": queries.values["queries"],
        "queries_error": queries.errors.get("queries"),
        "sweep_values": sweep.values if sweep else {},
        "sweep_errors": sweep.errors if sweep else {},
        "tags_values": tags.values if tags else {},
        "tags_errors": tags.errors if tags else {},
        "saved": saved,
        "sort_labels": QUERY_SORT_LABELS,
    }
    return render(request, "cases/case.html", context, status_code=status_code)


def back_to_case(request: Request, case_id: int, saved: str) -> Response:
    """Send the browser back to the case page, at the "saved" notice of the form just sent."""
    # The fragment scrolls the page to that notice, beside the form.
    url = request.url_for("case_page", case_id=case_id).include_query_params(saved=saved)
    return see_other(f"{url}#{saved}-saved")


def refused_sweep(
    request: Request, user: User, session: Session, case: Case, sweep: WebForm
) -> Response:
    """Return the case page again with the sweep form's errors under its boxes (422)."""
    data = case_pages.case_page(session=session, user=user, case=case)
    return _render_case(request, user, data, sweep=sweep, status_code=422)


def refused_tags(
    request: Request, user: User, session: Session, case: Case, tags: WebForm
) -> Response:
    """Return the case page again with the tag form's error under it and its input (422)."""
    data = case_pages.case_page(session=session, user=user, case=case)
    return _render_case(request, user, data, tags=tags, status_code=422)


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
    settings = CaseSettingsForm.read(form)
    current = case_service.current_try(session=session, case=case)
    choices = CaseChoices(
        engines={
            str(e.id): e.engine
            for e in endpoint_service.endpoint_options(session=session, user=user)
        },
        scorer_ids=frozenset(
            str(s.id) for s in scorer_service.scorer_options(session=session, user=user)
        ),
        options=case.options,
        endpoint_id=str(current.search_endpoint_id),
    )
    try:
        body = settings.body(choices)
        flows.update_case(session=session, user=user, case=case, body=body)
    except (FormErrors, Invalid) as exc:
        data = case_pages.case_page(session=session, user=user, case=case)
        return _render_case(request, user, data, settings=settings.add(exc), status_code=422)
    return back_to_case(request, case.id, "settings")


@router.post("/cases/{case_id}/queries", name="case_add_queries")
def add_queries(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add the pasted queries, one per line; an empty box says so (422)."""
    queries = QueriesForm.read(form)
    try:
        body = queries.body()
    except FormErrors:
        data = case_pages.case_page(session=session, user=user, case=case)
        return _render_case(request, user, data, queries=queries, status_code=422)
    query_service.add_queries(session=session, case=case, texts=body.queries)
    return back_to_case(request, case.id, "queries")


@router.get("/cases/{case_id}/score", name="case_score_partial")
def case_score(request: Request, case: WebCaseDep, session: SessionDep) -> Response:
    """Return the case score panel."""
    return render(
        request,
        "cases/partials/case_score.html",
        {"score": score_panel.case_score(session=session, case=case)},
    )


@router.get("/cases/{case_id}/query-list", name="query_list_partial")
def query_list(
    request: Request, case: WebCaseDep, session: SessionDep, view: ListViewDep
) -> Response:
    """Return one page of the query list."""
    queries = case_query_list(session=session, case=case, **view)
    return render(request, "cases/partials/query_list.html", {"case": case, "queries": queries})


@router.get("/cases/{case_id}/history", name="case_history_partial")
def case_history(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep, metric: str = ""
) -> Response:
    """Return the score chart and the runs table: a fragment for htmx, else a whole page
    (``metric``: chart that metric's recorded scores)."""
    history = case_pages.case_history(session=session, case=case, metric=_metric(metric))
    if is_htmx(request):
        return render(request, "cases/partials/history.html", {"history": history})
    # Opened directly (a link, a bookmark): a page with navigation around the same fragment.
    context = {"history": history, "case": case, "user": user}
    return render(request, "cases/case_history.html", context)


add_delete_routes(
    router,
    Deletable("case", "/cases/{case_id}", WebUser, WebCaseDep, case_service.delete_case),
    Farewell(
        "Its queries, ratings, tries and runs are deleted with it.",
        back="case_page",
        after="cases_page",
    ),
    docs=(
        "Ask before deleting a case.",
        "Delete a case and go back to the cases list (its owner only).",
    ),
)
