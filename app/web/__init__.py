"""HTML pages: server-rendered Jinja2, enhanced with htmx, every one usable without JavaScript."""

from fastapi import APIRouter

from app.web import account, cases, compare, endpoints, queries, scorers

router = APIRouter(include_in_schema=False)
router.include_router(account.router)
router.include_router(cases.router)
router.include_router(compare.router)
router.include_router(queries.router)
router.include_router(scorers.router)
router.include_router(endpoints.router)

__all__ = ["router"]
