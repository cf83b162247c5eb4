"""Loading a run of a case the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import CaseDep, WebCaseDep, owned
from app.models import Run
from app.runs.service import get_run

__all__ = ["RunDep", "WebRunDep"]

RunDep = Annotated[Run, Depends(owned(get_run, "run_id", inside=("case", CaseDep)))]
WebRunDep = Annotated[Run, Depends(owned(get_run, "run_id", inside=("case", WebCaseDep)))]
