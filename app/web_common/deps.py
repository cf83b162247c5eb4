"""Request plumbing every route shares: the database session (and its factory, for work
that outlives the request) and the posted form.

One transaction per request: services only flush; the request's session is committed once
the handler has answered below 400 and rolled back otherwise (an error raised, or a 4xx
page such as a form shown again with its problems), before the answer is sent (see
TransactionMiddleware).

Who is calling, and loading what they may see, is the accounts domain's (app/accounts/deps.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session, sessionmaker
from starlette.datastructures import FormData

from app.web_common.middleware import REQUEST_SESSIONS

__all__ = ["FormDep", "SessionDep", "SessionFactoryDep"]


def get_session(request: Request) -> Iterator[Session]:
    """Yield the request's database session, which TransactionMiddleware commits (an answer
    below 400) or rolls back (any other) before the answer goes out."""
    sessions: list[Session] | None = request.scope.get(REQUEST_SESSIONS)
    if sessions is None:
        raise RuntimeError("TransactionMiddleware is not installed: nothing would commit.")
    factory: sessionmaker[Session] = request.app.state.session_factory
    session = factory()
    sessions.append(session)
    try:
        yield session
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def get_session_factory(request: Request) -> sessionmaker[Session]:
    """Return the app's session factory, for work that outlives the request's session."""
    factory: sessionmaker[Session] = request.app.state.session_factory
    return factory


async def get_form(request: Request) -> FormData:
    """Return the posted form (parsed once; the CSRF check reads the same parse)."""
    return await request.form()


SessionDep = Annotated[Session, Depends(get_session)]
SessionFactoryDep = Annotated[sessionmaker[Session], Depends(get_session_factory)]
FormDep = Annotated[FormData, Depends(get_form)]
