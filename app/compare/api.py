"""Comparing two runs of a case (or a run with the current ratings) without changing either."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Query as QueryParam

from app.cases.deps import CaseDep
from app.compare import query as side_service
from app.compare import service
from app.compare.schemas import CompareSort, QuerySideBySide, RunComparison
from app.web_common.deps import SessionDep

# Included before the runs router: "/compare" must not be taken for a run id.
router = APIRouter(prefix="/cases/{case_id}/runs", tags=["runs"])


@router.get("/compare", response_model=RunComparison, name="compare_runs_json")
def compare_runs(
    case: CaseDep,
    session: SessionDep,
    base: Annotated[int, QueryParam(description="The run compared from")],
    other: Annotated[
        int | None, QueryParam(description="The run compared to; omitted: base re-scored")
    ] = None,
    sort: CompareSort = "delta",
) -> RunComparison:
    """Return per-query score changes between two runs, both scored with the current ratings."""
    return service.compare_by_ids(
        session=session, case=case, base_id=base, other_id=other, sort=sort
    )


@router.get(
    "/compare/queries/{query_id}", response_model=QuerySideBySide, name="compare_query_json"
)
def compare_query(
    query_id: int,
    case: CaseDep,
    session: SessionDep,
    base: Annotated[int, QueryParam(description="The run on the left")],
    other: Annotated[int, QueryParam(description="The run on the right")],
) -> QuerySideBySide:
    """Return one query's top k in two runs side by side, moved/new/dropped docs marked."""
    return side_service.side_by_side(
        session=session, case=case, query_id=query_id, base_id=base, other_id=other
    )
