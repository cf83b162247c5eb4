"""A query's score history over the case's finished runs."""

from __future__ import annotations

from fastapi import APIRouter

from app.cases.deps import CaseDep
from app.cases.history_schemas import QueryHistory
from app.cases.pages import history as history_service
from app.queries.deps import QueryDep
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases/{case_id}", tags=["cases"])


@router.get("/queries/{query_id}/history", response_model=QueryHistory, name="query_history_json")
def query_history(
    query: QueryDep, case: CaseDep, session: SessionDep, metric: int | None = None
) -> QueryHistory:
    """Return the query's stored score in every finished run of the case, oldest first
    (``metric``: a scorer id among the case's metrics, instead of the primary)."""
    return history_service.query_history(session=session, case=case, query=query, metric=metric)
