"""The JSON API under /api/v1."""

from fastapi import APIRouter

from app.api import account, cases, compare, endpoints, pages, queries, runs, scorers

router = APIRouter(prefix="/api/v1")
router.include_router(account.router)
router.include_router(endpoints.router)
router.include_router(scorers.router)
router.include_router(cases.router)
router.include_router(queries.router)
router.include_router(compare.router)
router.include_router(runs.router)
router.include_router(pages.router)

__all__ = ["router"]
