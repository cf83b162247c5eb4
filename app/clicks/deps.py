"""Loading a click log the caller may see, or 404 (see app/accounts/deps.py), and the app's
run manager, through which pulls start (app.clicks.pull.PullManager names what they need)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.accounts.deps import owned
from app.clicks.pull import PullManager
from app.clicks.service import get_log
from app.models import ClickLog

__all__ = ["ClickLogDep", "PullManagerDep", "WebClickLogDep"]


def pull_manager(request: Request) -> PullManager:
    """Return the app's run manager (made when the app starts)."""
    manager: PullManager = request.app.state.run_manager
    return manager


ClickLogDep = Annotated[ClickLog, Depends(owned(get_log, "click_log_id"))]
WebClickLogDep = Annotated[ClickLog, Depends(owned(get_log, "click_log_id", page=True))]
PullManagerDep = Annotated[PullManager, Depends(pull_manager)]
