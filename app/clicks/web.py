"""Click log pages: the list, and one log's summary with its CTR-by-rank chart."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.accounts.deps import WebUser
from app.clicks import pages as page_data
from app.clicks.deps import WebClickLogDep
from app.web_common.deps import SessionDep
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/click-logs", name="click_logs_page")
def click_logs_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the click logs the user may see."""
    page = page_data.click_logs_page(session=session, user=user)
    return render(request, "clicks/click_logs.html", {"user": user, "page": page})


@router.get("/click-logs/{click_log_id}", name="click_log_page")
def click_log_page(
    request: Request, log: WebClickLogDep, user: WebUser, session: SessionDep
) -> Response:
    """Show a click log's summary: counts by action, dates, CTR by rank."""
    page = page_data.click_log_page(session=session, log=log)
    return render(request, "clicks/click_log.html", {"user": user, "page": page})
