"""Deleting cases, queries, scorers and endpoints from the pages, always after a confirmation.

Each thing has a confirmation page (GET .../delete, works without JavaScript) whose form
posts to the same address. With htmx the delete buttons post straight away after the
browser's own confirm dialog (hx-confirm) and the answer redirects with HX-Redirect.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from app import access
from app.cases import queries as query_service
from app.cases import service as case_service
from app.endpoints import service as endpoint_service
from app.models import User
from app.scorers import service as scorer_service
from app.web_common.deps import SessionDep, WebUser
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import is_htmx, render
from app.web_common.web_deps import WebCaseDep, WebEndpointDep, WebQueryDep, WebScorerDep

router = APIRouter(route_class=HtmlErrorRoute)


@dataclass(frozen=True)
class Doomed:
    """What a confirmation page shows: the thing, what goes with it, where to go back."""

    kind: str
    name: str
    consequence: str
    action: str
    back: str


def _confirm(request: Request, user: User, doomed: Doomed) -> Response:
    return render(request, "confirm_delete.html", {"user": user, "doomed": doomed})


def _gone(request: Request, target: str) -> Response:
    if is_htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


@router.get("/cases/{case_id}/delete", name="case_delete_page")
def confirm_case(request: Request, case: WebCaseDep, user: WebUser) -> Response:
    """Ask before deleting a case."""
    doomed = Doomed(
        kind="case",
        name=case.name,
        consequence="Its queries, ratings, tries and runs are deleted with it.",
        action=str(request.url_for("case_delete_submit", case_id=case.id)),
        back=str(request.url_for("case_page", case_id=case.id)),
    )
    return _confirm(request, user, doomed)


@router.post("/cases/{case_id}/delete", name="case_delete_submit")
def delete_case(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Delete a case and go back to the cases list (its owner only)."""
    access.require_owner(user=user, obj=case, action="delete it")
    case_service.delete_case(session=session, case=case)
    return _gone(request, str(request.url_for("cases_page")))


@router.get("/cases/{case_id}/queries/{query_id}/delete", name="query_delete_page")
def confirm_query(
    request: Request, case: WebCaseDep, query: WebQueryDep, user: WebUser
) -> Response:
    """Ask before deleting a query."""
    doomed = Doomed(
        kind="query",
        name=query.text,
        consequence="Its ratings are deleted with it; past runs keep their copy of its results.",
        action=str(request.url_for("query_delete_submit", case_id=case.id, query_id=query.id)),
        back=str(request.url_for("query_page", case_id=case.id, query_id=query.id)),
    )
    return _confirm(request, user, doomed)


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
    return _gone(request, str(request.url_for("case_page", case_id=case.id)))


@router.get("/scorers/{scorer_id}/delete", name="scorer_delete_page")
def confirm_scorer(request: Request, scorer: WebScorerDep, user: WebUser) -> Response:
    """Ask before deleting a scorer."""
    doomed = Doomed(
        kind="scorer",
        name=scorer.name,
        consequence="Only a scorer that no case uses can be deleted.",
        action=str(request.url_for("scorer_delete_submit", scorer_id=scorer.id)),
        back=str(request.url_for("scorer_page", scorer_id=scorer.id)),
    )
    return _confirm(request, user, doomed)


@router.post("/scorers/{scorer_id}/delete", name="scorer_delete_submit")
def delete_scorer(
    request: Request, scorer: WebScorerDep, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Delete a scorer no case uses (409 page otherwise) and go back to the scorers."""
    access.require_owner(user=user, obj=scorer, action="delete it")
    scorer_service.delete_scorer(session=session, scorer=scorer)
    return _gone(request, str(request.url_for("scorers_page")))


@router.get("/endpoints/{endpoint_id}/delete", name="endpoint_delete_page")
def confirm_endpoint(request: Request, endpoint: WebEndpointDep, user: WebUser) -> Response:
    """Ask before deleting a search endpoint."""
    doomed = Doomed(
        kind="search endpoint",
        name=endpoint.name,
        consequence="Only an endpoint that no case uses can be deleted.",
        action=str(request.url_for("endpoint_delete_submit", endpoint_id=endpoint.id)),
        back=str(request.url_for("endpoint_page", endpoint_id=endpoint.id)),
    )
    return _confirm(request, user, doomed)


@router.post("/endpoints/{endpoint_id}/delete", name="endpoint_delete_submit")
def delete_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Delete an endpoint no case uses (409 page otherwise) and go back to the endpoints."""
    access.require_owner(user=user, obj=endpoint, action="delete it")
    endpoint_service.delete_endpoint(session=session, endpoint=endpoint)
    return _gone(request, str(request.url_for("endpoints_page")))
