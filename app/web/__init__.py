"""HTML pages."""

from fastapi import APIRouter

from app.web import account

router = APIRouter(include_in_schema=False)
router.include_router(account.router)

__all__ = ["router"]
