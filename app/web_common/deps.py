"""Request plumbing every route shares: the database session (and its factory, for work
that outlives the request) and the posted form.

Who is calling, and loading what they may see, is the accounts domain's (app/accounts/deps.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session, sessionmaker
from starlette.datastructures import FormData

__all__ = ["FormDep", "SessionDep", "SessionFactoryDep"]


def get_session(request: Request) -> Iterator[Session]:
    """Yield a database session for one request."""
    factory: sessionmaker[Session] = request.app.state.session_factory
    session = factory()
    try:
        yield session
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
