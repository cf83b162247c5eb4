"""JSON twins of a query's pages: the same functions as the HTML, served as JSON."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.cases.deps import CaseDep
from app.queries.deps import QueryDep
from app.queries.pages import rated_missing as missing_service
from app.queries.pages import results as result_service
from app.queries.pages.schemas import QueryResults, RatedMissing
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/pages", tags=["pages"])


@router.get(
    "/cases/{case_id}/queries/{query_id}", response_model=QueryResults, name="query_page_json"
)
def query_results(query: QueryDep, case: CaseDep, session: SessionDep) -> QueryResults:
    """Return one query's results from the latest run with the current ratings."""
    return result_service.query_results(session=session, case=case, query=query)


@router.get(
    "/cases/{case_id}/queries/{query_id}/rated-missing",
    response_model=RatedMissing,
    name="query_rated_missing_json",
)
async def rated_missing(query: QueryDep, case: CaseDep, session: SessionDep) -> RatedMissing:
    """Return the query's rated docs that its latest run did not return, fetched by id."""
    lookup = await run_in_threadpool(
        missing_service.plan_rated_missing, session=session, case=case, query=query
    )
    return await missing_service.fetch_rated_missing(lookup)
