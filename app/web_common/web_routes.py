"""HTML pages: server-rendered Jinja2, enhanced with htmx, every one usable without JavaScript."""

from fastapi import APIRouter

from app.accounts import web as account
from app.books import web as books
from app.cases import experiments_web as experiments
from app.cases import queries_web as queries
from app.cases import web as cases
from app.compare import web as compare
from app.endpoints import web as endpoints
from app.interop import quepid_web as quepid_case
from app.interop import ratings_web as ratings_io
from app.scorers import web as scorers
from app.sweeps import web as sweeps
from app.teams import sharing_web as sharing
from app.teams import web as teams
from app.web_common import deletes

router = APIRouter(include_in_schema=False)
router.include_router(account.router)
router.include_router(quepid_case.router)
router.include_router(cases.router)
router.include_router(compare.router)
router.include_router(queries.router)
router.include_router(scorers.router)
router.include_router(endpoints.router)
router.include_router(sweeps.router)
router.include_router(experiments.router)
router.include_router(books.router)
router.include_router(deletes.router)
router.include_router(ratings_io.router)
router.include_router(teams.router)
router.include_router(sharing.router)

__all__ = ["router"]
