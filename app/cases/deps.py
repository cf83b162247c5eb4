"""Loading a try of a case the caller may see, or 404 (``owned()`` in app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app import access
from app.accounts.deps import owned
from app.cases.tries import get_try
from app.models import Case, Try

__all__ = ["CaseDep", "TryDep", "WebCaseDep"]

CaseDep = Annotated[Case, Depends(owned(access.visible_case, "case_id"))]
WebCaseDep = Annotated[Case, Depends(owned(access.visible_case, "case_id", page=True))]
TryDep = Annotated[Try, Depends(owned(get_try, "number", inside=("case", CaseDep)))]
