"""The JSON API under /api/v1."""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from app.accounts import admin_api as admin
from app.accounts import api as account
from app.books import api as books
from app.books import pages_api as book_pages
from app.cases import api as cases
from app.cases import experiments_api as experiments
from app.cases import pages_api as pages
from app.cases import queries_api as queries
from app.compare import api as compare
from app.endpoints import api as endpoints
from app.interop import quepid_api as quepid_case
from app.interop import ratings_api as ratings_io
from app.runs import api as runs
from app.scorers import api as scorers
from app.sweeps import api as sweeps
from app.teams import api as teams


class ErrorBody(BaseModel):
    """The one error shape: {"detail": ...}."""

    detail: Any


# The error answers any API route may give, written once for the whole API.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "Bad request (for example a NUL character in the query string)",
        401: "Missing, wrong or expired API key",
        403: "Missing CSRF header, or a key without the right for this",
        404: "No such thing, or it belongs to another user",
        409: "Conflicts with the current state",
        413: "Request body too large",
        429: "Too many requests; see Retry-After",
    }.items()
}

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)
router.include_router(account.router)
router.include_router(endpoints.router)
router.include_router(scorers.router)
router.include_router(cases.router)
router.include_router(queries.router)
router.include_router(compare.router)
router.include_router(ratings_io.router)
router.include_router(quepid_case.router)
router.include_router(runs.router)
router.include_router(sweeps.router)
router.include_router(experiments.router)
router.include_router(books.router)
router.include_router(pages.router)
router.include_router(book_pages.router)
router.include_router(teams.router)
router.include_router(admin.router)

__all__ = ["router"]
