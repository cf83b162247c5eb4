"""Request dependencies, declared once as Annotated aliases."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session, sessionmaker

from app import access
from app.accounts import service as users
from app.accounts import sessions
from app.config import Settings
from app.models import Book, Case, Scorer, SearchEndpoint, User
from app.security import csrf_matches

__all__ = [
    "BookDep",
    "CaseDep",
    "CurrentUser",
    "EndpointDep",
    "KeyManager",
    "LoginRequired",
    "ScorerDep",
    "SessionDep",
    "WebUser",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class LoginRequired(Exception):
    """A page needs a signed-in user; answered with a redirect to the login page."""


def get_session(request: Request) -> Iterator[Session]:
    """Yield a database session for one request."""
    factory: sessionmaker[Session] = request.app.state.session_factory
    session = factory()
    try:
        yield session
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]


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


def get_key_manager(request: Request, user: CurrentUser) -> User:
    """Return the caller if allowed to mint or revoke keys: a browser, or a key with the right."""
    api_key = getattr(request.state, "api_key", None)
    if api_key is not None and not api_key.can_manage_keys:
        raise HTTPException(403, "This API key was not created with the right to manage keys.")
    return user


KeyManager = Annotated[User, Depends(get_key_manager)]
WebUser = Annotated[User, Depends(get_web_user)]


def get_owned_case(case_id: int, user: CurrentUser, session: SessionDep) -> Case:
    """Return the case when the caller may see it, else 404."""
    return access.visible_case(session=session, user=user, case_id=case_id)


def get_owned_endpoint(endpoint_id: int, user: CurrentUser, session: SessionDep) -> SearchEndpoint:
    """Return the search endpoint when the caller may see it, else 404."""
    return access.visible_endpoint(session=session, user=user, endpoint_id=endpoint_id)


def get_visible_scorer(scorer_id: int, user: CurrentUser, session: SessionDep) -> Scorer:
    """Return the scorer when it is a preset or the caller's own, else 404."""
    return access.visible_scorer(session=session, user=user, scorer_id=scorer_id)


CaseDep = Annotated[Case, Depends(get_owned_case)]
EndpointDep = Annotated[SearchEndpoint, Depends(get_owned_endpoint)]
ScorerDep = Annotated[Scorer, Depends(get_visible_scorer)]


def get_visible_book(book_id: int, user: CurrentUser, session: SessionDep) -> Book:
    """Return the book when the caller may see it, else 404."""
    return access.visible_book(session=session, user=user, book_id=book_id)


BookDep = Annotated[Book, Depends(get_visible_book)]
