"""Every domain's routers, assembled: the JSON API under /api/v1 and the HTML pages.

Pages are server-rendered Jinja2, enhanced with htmx, every one usable without JavaScript.
The order of each list is the order routes are matched in.
"""

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from app.accounts import web as accounts_web
from app.accounts.api import accounts as accounts_api
from app.accounts.api import admin as admin_api
from app.books import web as books_web
from app.books.api import books as books_api
from app.books.api import pages as book_pages_api
from app.cases.api import cases as cases_api
from app.cases.api import coverage as coverage_api
from app.cases.api import history as history_api
from app.cases.api import pages as pages_api
from app.cases.web import cases as cases_web
from app.cases.web import coverage as coverage_web
from app.cases.web import history as history_web
from app.cases.web import metrics as metrics_web
from app.clicks import api as clicks_api
from app.clicks import web as clicks_web
from app.compare import api as compare_api
from app.compare import web as compare_web
from app.endpoints import web as endpoints_web
from app.endpoints.api import endpoints as endpoints_api
from app.endpoints.api import pages as endpoint_pages_api
from app.interop.api import quepid as quepid_api
from app.interop.api import ratings as ratings_api
from app.interop.web import quepid as quepid_web
from app.interop.web import ratings as ratings_web
from app.judges import api as judges_api
from app.judges import web as judges_web
from app.queries import web as queries_web
from app.queries.api import pages as query_pages_api
from app.queries.api import queries as queries_api
from app.runs import api as runs_api
from app.runs import web as runs_web
from app.schedules import api as schedules_api
from app.schedules import web as schedules_web
from app.scorers import web as scorers_web
from app.scorers.api import pages as scorer_pages_api
from app.scorers.api import scorers as scorers_api
from app.sweeps import api as sweeps_api
from app.sweeps import web as sweeps_web
from app.teams import api as teams_api
from app.teams.web import sharing as sharing_web
from app.teams.web import teams as teams_web


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

api_router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)
for _module in (
    accounts_api,
    endpoints_api,
    scorers_api,
    cases_api,
    queries_api,
    compare_api,
    ratings_api,
    quepid_api,
    runs_api,
    sweeps_api,
    coverage_api,
    history_api,
    books_api,
    pages_api,
    query_pages_api,
    scorer_pages_api,
    endpoint_pages_api,
    book_pages_api,
    judges_api,
    teams_api,
    admin_api,
    schedules_api,
    clicks_api,
):
    api_router.include_router(_module.router)

web_router = APIRouter(include_in_schema=False)
for _module in (
    schedules_web,
    accounts_web,
    quepid_web,
    cases_web,
    runs_web,
    metrics_web,
    compare_web,
    queries_web,
    scorers_web,
    endpoints_web,
    sweeps_web,
    coverage_web,
    history_web,
    books_web,
    judges_web,
    ratings_web,
    teams_web,
    sharing_web,
    clicks_web,
):
    web_router.include_router(_module.router)

__all__ = ["ERROR_RESPONSES", "api_router", "web_router"]
