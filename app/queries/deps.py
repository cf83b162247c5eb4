"""Loading a query of a case the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import owned
from app.cases.deps import CaseDep, WebCaseDep
from app.models import Query
from app.queries.service import get_query

__all__ = ["QueryDep", "WebQueryDep"]

QueryDep = Annotated[Query, Depends(owned(get_query, "query_id", inside=("case", CaseDep)))]
WebQueryDep = Annotated[Query, Depends(owned(get_query, "query_id", inside=("case", WebCaseDep)))]
