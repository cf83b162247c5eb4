"""Page dependencies: load a thing the signed-in user may see, or answer 404, written once."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import FormData

from app import access
from app.cases import queries as query_service
from app.models import Case, Query, Scorer, SearchEndpoint
from app.web_common.deps import SessionDep, WebUser

__all__ = ["FormDep", "WebCaseDep", "WebEndpointDep", "WebQueryDep", "WebScorerDep"]


def get_web_case(case_id: int, user: WebUser, session: SessionDep) -> Case:
    """Return the case when the signed-in user may see it, else 404."""
    return access.visible_case(session=session, user=user, case_id=case_id)


WebCaseDep = Annotated[Case, Depends(get_web_case)]


def get_web_query(query_id: int, case: WebCaseDep, session: SessionDep) -> Query:
    """Return a query of a visible case, else 404."""
    return query_service.get_query(session=session, case=case, query_id=query_id)


def get_web_endpoint(endpoint_id: int, user: WebUser, session: SessionDep) -> SearchEndpoint:
    """Return the search endpoint when the signed-in user may see it, else 404."""
    return access.visible_endpoint(session=session, user=user, endpoint_id=endpoint_id)


def get_web_scorer(scorer_id: int, user: WebUser, session: SessionDep) -> Scorer:
    """Return the scorer when it is a preset or the user's own, else 404."""
    return access.visible_scorer(session=session, user=user, scorer_id=scorer_id)


async def get_form(request: Request) -> FormData:
    """Return the posted form (parsed once; the CSRF check reads the same parse)."""
    return await request.form()


WebQueryDep = Annotated[Query, Depends(get_web_query)]
WebEndpointDep = Annotated[SearchEndpoint, Depends(get_web_endpoint)]
WebScorerDep = Annotated[Scorer, Depends(get_web_scorer)]
FormDep = Annotated[FormData, Depends(get_form)]
