"""A query's score history chart."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.cases.pages import history as history_service
from app.queries.deps import WebQueryDep
from app.web_common.deps import SessionDep
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/cases/{case_id}/queries/{query_id}/history", name="query_history_page")
def query_history_page(
    request: Request,
    case: WebCaseDep,
    query: WebQueryDep,
    user: WebUser,
    session: SessionDep,
    metric: int | None = None,
) -> Response:
    """Show the query's score (or one of the case's metrics) over the case's finished runs."""
    data = history_service.query_history(session=session, case=case, query=query, metric=metric)
    return render(request, "cases/query_history.html", {"user": user, "case": case, "page": data})
