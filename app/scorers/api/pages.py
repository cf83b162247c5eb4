"""JSON twins of the scorer pages: the same page-data functions, served as JSON."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.scorers.deps import ScorerDep
from app.scorers.pages import data as scorer_pages
from app.scorers.pages.schemas import ScorerPage, ScorersPage
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/pages", tags=["pages"])


@router.get("/scorers", response_model=ScorersPage, name="scorers_page_json")
def scorers_page(user: CurrentUser, session: SessionDep) -> ScorersPage:
    """Return the data of the scorers list page."""
    return scorer_pages.scorers_page(session=session, user=user)


@router.get("/scorers/new", response_model=ScorerPage, name="scorer_new_page_json")
def new_scorer_page(user: CurrentUser, session: SessionDep) -> ScorerPage:
    """Return the data of an empty scorer editor (the queries to try it on)."""
    return scorer_pages.scorer_page(session=session, user=user, scorer=None)


@router.get("/scorers/{scorer_id}", response_model=ScorerPage, name="scorer_page_json")
def scorer_page(scorer: ScorerDep, user: CurrentUser, session: SessionDep) -> ScorerPage:
    """Return the data of a scorer's editor."""
    return scorer_pages.scorer_page(session=session, user=user, scorer=scorer)
