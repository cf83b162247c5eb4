"""JSON twins of the cases list and case pages: the same page-data functions, served as JSON."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.cases.deps import CaseDep
from app.cases.pages import cases_list, score_panel
from app.cases.pages import data as case_pages
from app.cases.pages.query_list import case_query_list
from app.cases.pages.schemas import (
    CaseHistory,
    CasePage,
    CasesPage,
    QueryList,
    QuerySort,
)
from app.cases.pages.score_panel import CaseScore
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/pages", tags=["pages"])


@router.get("/cases", response_model=CasesPage, name="cases_page_json")
def cases_page(user: CurrentUser, session: SessionDep, show: str = "all") -> CasesPage:
    """Return the data of the cases list page (`show`: all, mine or team-<id>)."""
    return cases_list.cases_page(session=session, user=user, show=show)


@router.get("/cases/{case_id}", response_model=CasePage, name="case_page_json")
def case_page(
    case: CaseDep,
    user: CurrentUser,
    session: SessionDep,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    tag: str = "",
    metric: int | None = None,
) -> CasePage:
    """Return the data of a case page, with one page of its query list (``tag``: only the
    queries with it; ``metric``: the scorer id the score sorts use)."""
    return case_pages.case_page(
        session=session, user=user, case=case, sort=sort, q=q, page=page, tag=tag, metric=metric
    )


@router.get("/cases/{case_id}/score", response_model=CaseScore, name="case_score_json")
def case_score(case: CaseDep, session: SessionDep) -> CaseScore:
    """Return the case score panel: latest finished run's score and counts."""
    return score_panel.case_score(session=session, case=case)


@router.get("/cases/{case_id}/query-list", response_model=QueryList, name="query_list_json")
def query_list(
    case: CaseDep,
    session: SessionDep,
    sort: QuerySort = "position",
    q: str = "",
    page: int = 1,
    tag: str = "",
    metric: int | None = None,
) -> QueryList:
    """Return one page of the case's query list."""
    return case_query_list(
        session=session, case=case, sort=sort, q=q, page=page, tag=tag, metric=metric
    )


@router.get("/cases/{case_id}/history", response_model=CaseHistory, name="case_history_json")
def case_history(case: CaseDep, session: SessionDep, metric: int | None = None) -> CaseHistory:
    """Return the case's score history and latest runs."""
    return case_pages.case_history(session=session, case=case, metric=metric)
