"""JSON twins of the search endpoint pages: the same service functions, served as JSON."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.endpoints import service as endpoint_service
from app.endpoints.deps import EndpointDep
from app.endpoints.schemas import EndpointRead, EndpointsPage
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/pages", tags=["pages"])


@router.get("/search-endpoints", response_model=EndpointsPage, name="endpoints_page_json")
def endpoints_page(user: CurrentUser, session: SessionDep) -> EndpointsPage:
    """Return the data of the search endpoints page."""
    return endpoint_service.endpoints_page(session=session, user=user)


@router.get(
    "/search-endpoints/{endpoint_id}", response_model=EndpointRead, name="endpoint_page_json"
)
def endpoint_page(endpoint: EndpointDep) -> EndpointRead:
    """Return the data of a search endpoint's page (secrets reduced to their presence)."""
    return endpoint_service.to_read(endpoint)
