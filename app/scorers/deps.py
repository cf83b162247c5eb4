"""Loading a scorer the caller may see, or 404 (``owned()`` in app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app import access
from app.accounts.deps import owned
from app.models import Scorer

__all__ = ["ScorerDep", "WebScorerDep"]

ScorerDep = Annotated[Scorer, Depends(owned(access.visible_scorer, "scorer_id"))]
WebScorerDep = Annotated[Scorer, Depends(owned(access.visible_scorer, "scorer_id", page=True))]
