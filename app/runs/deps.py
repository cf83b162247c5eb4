"""Loading a run of a case the caller may see, or 404 (see app/accounts/deps.py); the app's
run manager, for the routers that start and cancel runs and sweeps."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.accounts.deps import owned
from app.cases.deps import CaseDep, WebCaseDep
from app.models import Run
from app.runs.manager import RunManager
from app.runs.service import get_run

__all__ = ["RunDep", "RunManagerDep", "WebRunDep"]

RunDep = Annotated[Run, Depends(owned(get_run, "run_id", inside=("case", CaseDep)))]
WebRunDep = Annotated[Run, Depends(owned(get_run, "run_id", inside=("case", WebCaseDep)))]


def run_manager(request: Request) -> RunManager:
    """Return the app's run manager (made when the app starts)."""
    manager: RunManager = request.app.state.run_manager
    return manager


RunManagerDep = Annotated[RunManager, Depends(run_manager)]
