"""The API's error answers: every error, expected or not, as {"detail": ...}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.errors import RelevoError, TooManyRequests

__all__ = ["install_error_handlers"]

log = logging.getLogger(__name__)


def install_error_handlers(app: FastAPI) -> None:
    """Make every error, expected or not, answer with {"detail": ...}.

    FastAPI's own handler already answers HTTPException (404 for unknown routes, 405...)
    in that shape, so only our errors, validation errors and the unexpected need one.
    """

    async def relevo_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RelevoError)
        headers = (
            {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, TooManyRequests) else None
        )
        body = {"detail": exc.detail(), **exc.extra()}
        return JSONResponse(body, status_code=exc.status_code, headers=headers)

    async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse({"detail": "Internal error; it has been logged."}, status_code=500)

    app.add_exception_handler(RelevoError, relevo_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected)
