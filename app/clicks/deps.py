"""Loading a click log the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import owned
from app.clicks.service import get_log
from app.models import ClickLog

__all__ = ["ClickLogDep", "WebClickLogDep"]

ClickLogDep = Annotated[ClickLog, Depends(owned(get_log, "click_log_id"))]
WebClickLogDep = Annotated[ClickLog, Depends(owned(get_log, "click_log_id", page=True))]
