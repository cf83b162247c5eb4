"""Judgement coverage of a case: what is unrated, the score band it leaves open."""

from __future__ import annotations

from fastapi import APIRouter

from app.cases.coverage_schemas import CaseCoverage
from app.cases.deps import CaseDep
from app.cases.pages import coverage as coverage_service
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases/{case_id}", tags=["cases"])


@router.get("/coverage", response_model=CaseCoverage, name="coverage_json")
def coverage(case: CaseDep, session: SessionDep) -> CaseCoverage:
    """Return unrated top-k docs, the min/max score band and what to rate next."""
    return coverage_service.case_coverage(session=session, case=case)
