"""The coverage page of a case."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.cases.pages import coverage as coverage_service
from app.web_common.deps import SessionDep
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/cases/{case_id}/coverage", name="coverage_page")
def coverage_page(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep
) -> Response:
    """Show unrated docs per query, the score band they leave open, and what to rate next."""
    data = coverage_service.case_coverage(session=session, case=case)
    return render(request, "cases/coverage.html", {"user": user, "case": case, "page": data})
