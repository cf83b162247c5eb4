"""The one redirect a form answers with: 303 See Other, so the browser follows it with GET."""

from __future__ import annotations

from fastapi.responses import RedirectResponse
from starlette.datastructures import URL

__all__ = ["see_other"]


def see_other(url: str | URL, *, headers: dict[str, str] | None = None) -> RedirectResponse:
    """Answer a form with 303 See Other to ``url`` (post, redirect, get)."""
    return RedirectResponse(str(url), status_code=303, headers=headers)
