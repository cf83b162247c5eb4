"""Jinja2 setup shared by the page routers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from app.security import new_csrf_token

TEMPLATES_DIR = Path(__file__).resolve().parent.parent.parent / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))


def csrf_token(request: Request) -> str:
    """Return the session's CSRF token, creating it on first use."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = new_csrf_token()
        request.session["csrf"] = token
    return token


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    """Render a page with the CSRF token and the signed-in user's email in its context."""
    full = {"csrf_token": csrf_token(request), **context}
    return templates.TemplateResponse(request, name, full, status_code=status_code)
