"""Judgement coverage of a case and score history of a query."""

from __future__ import annotations

from fastapi import APIRouter

from app.cases.coverage_schemas import CaseCoverage
from app.cases.deps import CaseDep
from app.cases.history_schemas import QueryHistory
from app.cases.pages import coverage as coverage_service
from app.cases.pages import history as history_service
from app.queries.deps import QueryDep
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases/{case_id}", tags=["cases"])


@router.get("/coverage", response_model=CaseCoverage, name="coverage_json")
def coverage(case: CaseDep, session: SessionDep) -> CaseCoverage:
    """Return unrated top-k docs, the min/max score band and what to rate next."""
    return coverage_service.case_coverage(session=session, case=case)


@router.get("/queries/{query_id}/history", response_model=QueryHistory, name="query_history_json")
def query_history(
    query: QueryDep, case: CaseDep, session: SessionDep, metric: int | None = None
) -> QueryHistory:
    """Return the query's stored score in every finished run of the case, oldest first
    (``metric``: a scorer id among the case's metrics, instead of the primary)."""
    return history_service.query_history(session=session, case=case, query=query, metric=metric)
