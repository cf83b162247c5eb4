"""HTML pages: the home dashboard."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.schedules.dashboard import dashboard
from app.web_common.deps import SessionDep, WebUser
from app.web_common.templating import render

router = APIRouter()


@router.get("/dashboard", name="dashboard_page", response_class=HTMLResponse)
def dashboard_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """The cases the user may see, what got worse first."""
    data = dashboard(session=session, user=user)
    return render(request, "dashboard.html", {"user": user, "dashboard": data})
