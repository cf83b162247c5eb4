"""Request plumbing every route shares: the database session and the posted form.

Who is calling, and loading what they may see, is the accounts domain's (app/accounts/deps.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session, sessionmaker
from starlette.datastructures import FormData

__all__ = ["FormDep", "SessionDep"]


def get_session(request: Request) -> Iterator[Session]:
    """Yield a database session for one request."""
    factory: sessionmaker[Session] = request.app.state.session_factory
    session = factory()
    try:
        yield session
    finally:
        session.close()


async def get_form(request: Request) -> FormData:
    """Return the posted form (parsed once; the CSRF check reads the same parse)."""
    return await request.form()


SessionDep = Annotated[Session, Depends(get_session)]
FormDep = Annotated[FormData, Depends(get_form)]
