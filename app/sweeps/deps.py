"""Loading a sweep of a case the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import owned
from app.cases.deps import CaseDep, WebCaseDep
from app.models import Sweep
from app.sweeps.service import get_sweep

__all__ = ["SweepDep", "WebSweepDep"]

SweepDep = Annotated[Sweep, Depends(owned(get_sweep, "sweep_id", inside=("case", CaseDep)))]
WebSweepDep = Annotated[Sweep, Depends(owned(get_sweep, "sweep_id", inside=("case", WebCaseDep)))]
