"""Who is calling, and the one way a route loads what they may see (or answers 404).

API routes take ``CurrentUser`` (a Bearer key, or a browser session with the CSRF header);
pages take ``WebUser`` (the browser session, else the login page). ``owned()`` makes every
"load it or 404" dependency: ``CaseDep``, ``WebCaseDep`` and the rest are declared with it in
their domain's ``deps.py``; here only the users an administrator manages.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from app.accounts import admin, scopes, sessions
from app.accounts import service as users
from app.config import Settings
from app.errors import LoginRequired
from app.models import User
from app.security import csrf_matches
from app.web_common.deps import SessionDep

__all__ = [
    "CurrentUser",
    "KeyManager",
    "ManagedUserDep",
    "WebManagedUserDep",
    "WebUser",
    "owned",
]

T = TypeVar("T")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def session_user(request: Request, session: Session) -> User | None:
    """Return the user signed in through the browser session, if any."""
    token = request.session.get("sid")
    if not isinstance(token, str):
        return None
    settings: Settings = request.app.state.settings
    user = sessions.user_for_token(
        session=session, token=token, idle_timeout_s=settings.session_idle_timeout_s
    )
    if user is None:
        request.session.clear()
    return user


def get_api_user(request: Request, session: SessionDep) -> User:
    """Return the caller of an API route: a Bearer key, or a browser session with CSRF header."""
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    request.state.api_key = None
    if header:
        api_key = (
            users.api_key_for(session=session, key=key.strip())
            if scheme.lower() == "bearer"
            else None
        )
        user = None if api_key is None else session.get(User, api_key.user_id)
        if api_key is None or user is None or user.is_disabled:
            raise _unauthorized("Invalid or expired API key.")
        needed = scopes.required_scope(request.method, request.url.path)
        if needed not in scopes.split_scopes(api_key.scopes):
            raise HTTPException(403, scopes.missing_scope_message(needed, api_key.scopes))
        request.state.api_key = api_key
        return user
    user = session_user(request, session)
    if user is None:
        raise _unauthorized("Authentication required: send 'Authorization: Bearer <api key>'.")
    if request.method not in SAFE_METHODS and not csrf_matches(
        request.session.get("csrf"), request.headers.get("x-csrf-token")
    ):
        raise HTTPException(403, "Missing or wrong X-CSRF-Token header.")
    return user


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})


def get_web_user(request: Request, session: SessionDep) -> User:
    """Return the signed-in user of a page, or send the browser to the login page."""
    user = session_user(request, session)
    if user is None:
        raise LoginRequired()
    return user


CurrentUser = Annotated[User, Depends(get_api_user)]
WebUser = Annotated[User, Depends(get_web_user)]


def get_key_manager(request: Request, user: CurrentUser) -> User:
    """Return the caller if allowed to mint or revoke keys: a browser, or a key with the right."""
    api_key = getattr(request.state, "api_key", None)
    if api_key is not None and not api_key.can_manage_keys:
        raise HTTPException(403, "This API key was not created with the right to manage keys.")
    return user


KeyManager = Annotated[User, Depends(get_key_manager)]


def owned(
    load: Callable[..., T],
    id_name: str,
    *,
    inside: tuple[str, Any] | None = None,
    page: bool = False,
) -> Callable[..., T]:
    """Return a dependency that loads one thing by its path id, or lets ``load`` answer 404.

    Without ``inside``, ``load(session=, user=, <id_name>=)`` decides what the caller (the
    page's user when ``page``) may see. With ``inside=(name, ParentDep)``, the thing belongs to
    a parent loaded first by ``ParentDep``, and ``load(session=, <name>=parent, <id_name>=)``
    finds it within that parent.
    """

    def dependency(**kwargs: Any) -> T:
        return load(**kwargs)

    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter(id_name, keyword, annotation=int),
        inspect.Parameter("session", keyword, annotation=SessionDep),
    ]
    if inside is None:
        params.append(
            inspect.Parameter("user", keyword, annotation=WebUser if page else CurrentUser)
        )
    else:
        params.append(inspect.Parameter(inside[0], keyword, annotation=inside[1]))
    dependency.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    dependency.__name__ = f"load_{id_name.removesuffix('_id')}"
    return dependency


ManagedUserDep = Annotated[User, Depends(owned(admin.managed_user, "user_id"))]
WebManagedUserDep = Annotated[User, Depends(owned(admin.managed_user, "user_id", page=True))]
