"""Login, logout and the account page with API keys."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from app.accounts import service as users
from app.accounts import sessions
from app.accounts.deps import WebUser
from app.accounts.scopes import SCOPES, split_scopes
from app.accounts.throttle import LoginThrottle
from app.errors import Invalid
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


def _safe_next(target: str) -> str:
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", name="login_page")
def login_page(request: Request, next: str = "/") -> Response:
    """Show the login form."""
    return render(
        request, "accounts/login.html", {"next": _safe_next(next), "error": None, "email": ""}
    )


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
    throttle: LoginThrottle = request.app.state.login_throttle
    address = request.client.host if request.client else "unknown"
    email = email.replace("\x00", "")
    context = {"next": _safe_next(next), "email": email}
    wait = throttle.retry_after(email=email, address=address)
    if wait:
        error = f"Too many failed attempts; try again in {wait} seconds."
        headers = {"Retry-After": str(wait)}
        return render(
            request,
            "accounts/login.html",
            {**context, "error": error},
            status_code=429,
            headers=headers,
        )
    user = users.authenticate(session=session, email=email, password=password)
    if user is None:
        throttle.failed(email=email, address=address)
        error = "Wrong email or password."
        return render(request, "accounts/login.html", {**context, "error": error}, status_code=400)
    throttle.succeeded(email=email)
    request.session.clear()
    request.session["sid"] = sessions.start(session=session, user=user)
    return see_other(_safe_next(next))


@router.post("/logout", name="logout")
def logout(request: Request, session: SessionDep, _csrf: CsrfChecked) -> Response:
    """Sign out: the server forgets the session, so a copied cookie stops working too."""
    token = request.session.get("sid")
    if isinstance(token, str):
        sessions.revoke(session=session, token=token)
    request.session.clear()
    return see_other(request.url_for("login_page"))


@router.get("/account", name="account_page")
def account_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """Show the account with its API keys."""
    return _account(request, user, session)


def _account(
    request: Request,
    user: WebUser,
    session: SessionDep,
    *,
    new_key: str | None = None,
    error: str | None = None,
    notice: str | None = None,
    key_error: str | None = None,
    key_name: str = "",
    status_code: int = 200,
) -> Response:
    keys = users.list_api_keys(session=session, user=user)
    context = {
        "user": user,
        "keys": keys,
        "new_key": new_key,
        "error": error,
        "notice": notice,
        "key_error": key_error,
        "key_name": key_name,
        "scopes": SCOPES,
        "scope_lists": {key.id: split_scopes(key.scopes) for key in keys},
    }
    return render(request, "accounts/account.html", context, status_code=status_code)


@router.post("/account/api-keys", name="account_create_key")
def create_key(
    request: Request,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    name: Annotated[str, Form()] = "",
    scopes: Annotated[list[str] | None, Form()] = None,
    scopes_shown: Annotated[str, Form()] = "",
) -> Response:
    """Create a key and show it once, in this answer: it never travels in the cookie.

    Its scopes are the boxes ticked (every one when the form had none to tick).
    """
    asked = scopes or ([] if scopes_shown else None)
    try:
        _key, clear = users.create_api_key(session=session, user=user, name=name, scopes=asked)
    except Invalid as exc:  # shown under the key form, with what was typed
        return _account(
            request, user, session, key_error=exc.message, key_name=name, status_code=422
        )
    return _account(request, user, session, new_key=clear)


@router.post("/account/api-keys/{key_id}/scopes", name="account_key_scopes")
def key_scopes(
    request: Request,
    key_id: int,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    scopes: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Set what one of the user's keys may do."""
    try:
        users.set_scopes(session=session, user=user, key_id=key_id, scopes=scopes or [])
    except Invalid as exc:
        return _account(request, user, session, key_error=exc.message, status_code=422)
    return see_other(request.url_for("account_page"))


@router.post("/account/api-keys/{key_id}/revoke", name="account_revoke_key")
def revoke_key(
    request: Request, key_id: int, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Revoke one of the user's keys."""
    users.revoke_api_key(session=session, user=user, key_id=key_id)
    return see_other(request.url_for("account_page"))


@router.post("/account/password", name="account_password")
def change_password(
    request: Request,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
    current_password: Annotated[str, Form()] = "",
    new_password: Annotated[str, Form()] = "",
) -> Response:
    """Change the password; every session ends, and this browser signs in afresh."""
    try:
        users.change_password(
            session=session, user=user, current=current_password, new=new_password
        )
    except Invalid as exc:
        return _account(request, user, session, error=exc.message, status_code=400)
    request.session.clear()
    request.session["sid"] = sessions.start(session=session, user=user)
    return _account(request, user, session, notice="Password changed; other sessions signed out.")
