"""Errors on pages answer with an HTML page, not the API's JSON body.

Every page router uses `HtmlErrorRoute`, so a NotFound (also for another user's thing),
a refused CSRF token or a malformed path becomes a small page with the same status code.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from app.errors import RelevoError
from app.web_common.templating import render

__all__ = ["HtmlErrorRoute", "error_page"]

TITLES = {403: "Forbidden", 404: "Not found", 409: "Conflict", 422: "Invalid request"}


def error_page(request: Request, status_code: int, message: str) -> Response:
    """Return the error page for a status code and a sentence saying what went wrong."""
    title = TITLES.get(status_code, "Error")
    return render(
        request,
        "error.html",
        {"title": title, "message": message, "user": None},
        status_code=status_code,
    )


class HtmlErrorRoute(APIRoute):
    """A page route whose expected errors are rendered as HTML pages."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """Return the route's handler wrapped to turn errors into pages."""
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except RelevoError as exc:
                return error_page(request, exc.status_code, exc.message)
            except RequestValidationError:
                return error_page(request, 422, "The address or form is not valid.")
            except HTTPException as exc:
                return error_page(request, exc.status_code, str(exc.detail))

        return page_handler
