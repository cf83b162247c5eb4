"""Form posts: CSRF check written once."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Form, HTTPException, Request

from app.security import csrf_matches


def check_csrf(request: Request, csrf_token: Annotated[str, Form()] = "") -> None:
    """Refuse a form post whose token is not the session's (header X-CSRF-Token also counts)."""
    given = csrf_token or request.headers.get("x-csrf-token", "")
    if not csrf_matches(request.session.get("csrf"), given):
        raise HTTPException(403, "The form has expired or did not come from Relevo; reload it.")


CsrfChecked = Annotated[None, Depends(check_csrf)]
