"""Loading a try of a case the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import CaseDep, owned
from app.models import Try
from app.runs.case_data import get_try

__all__ = ["TryDep"]

TryDep = Annotated[Try, Depends(owned(get_try, "number", inside=("case", CaseDep)))]
