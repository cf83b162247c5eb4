"""Login, logout and the account page with API keys."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from app.deps import SessionDep, WebUser
from app.services import users
from app.web.errors import HtmlErrorRoute
from app.web.forms import CsrfChecked
from app.web.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


def _safe_next(target: str) -> str:
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", name="login_page")
def login_page(request: Request, next: str = "/") -> Response:
    """Show the login form."""
    return render(request, "login.html", {"next": _safe_next(next), "error": None})


@router.post("/login", name="login_submit")
def login_submit(
    request: Request,
    session: SessionDep,
    _csrf: CsrfChecked,
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
) -> Response:
    """Sign in and go on to the page that asked for it."""
    user = users.authenticate(session=session, email=email, password=password)
    if user is None:
        return render(
            request,
            "login.html",
            {"next": _safe_next(next), "error": "Wrong email or password.", "email": email},
            status_code=400,
        )
    request.session.clear()
    request.session["user_id"] = user.id
    return RedirectResponse(_safe_next(next), status_code=303)


@router.post("/logout", name="logout")
def logout(request: Request, _csrf: CsrfChecked) -> Response:
    """Sign out."""
    request.session.clear()
    return RedirectResponse(str(request.url_for("login_page")), status_code=303)


@router.get("/account", name="account_page")
def account_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show the account with its API keys."""
    keys = users.list_api_keys(session=session, user=user)
    new_key = request.session.pop("new_api_key", None)
    return render(request, "account.html", {"user": user, "keys": keys, "new_key": new_key})


@router.post("/account/api-keys", name="account_create_key")
def create_key(
    request: Request,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    name: Annotated[str, Form()] = "",
) -> Response:
    """Create a key and show it once on the account page."""
    _key, clear = users.create_api_key(session=session, user=user, name=name)
    request.session["new_api_key"] = clear
    return RedirectResponse(str(request.url_for("account_page")), status_code=303)


@router.post("/account/api-keys/{key_id}/revoke", name="account_revoke_key")
def revoke_key(
    request: Request, key_id: int, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Revoke one of the user's keys."""
    users.revoke_api_key(session=session, user=user, key_id=key_id)
    return RedirectResponse(str(request.url_for("account_page")), status_code=303)
