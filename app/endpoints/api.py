"""Search endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from app import access
from app.endpoints import service
from app.endpoints.schemas import (
    ConnectionReportRead,
    ConnectionTest,
    EndpointCreate,
    EndpointRead,
    EndpointUpdate,
)
from app.teams import service as teams
from app.web_common.deps import CurrentUser, EndpointDep, SessionDep

router = APIRouter(prefix="/search-endpoints", tags=["search endpoints"])


@router.get("", response_model=list[EndpointRead])
def list_endpoints(user: CurrentUser, session: SessionDep) -> list[EndpointRead]:
    """Return the caller's search endpoints."""
    return [service.to_read(e) for e in service.list_endpoints(session=session, user=user)]


@router.post("", response_model=EndpointRead, status_code=201)
def create_endpoint(body: EndpointCreate, user: CurrentUser, session: SessionDep) -> EndpointRead:
    """Create a search endpoint."""
    return service.to_read(service.create_endpoint(session=session, user=user, body=body))


@router.get("/{endpoint_id}", response_model=EndpointRead)
def get_endpoint(endpoint: EndpointDep) -> EndpointRead:
    """Return one search endpoint (secrets as header names and has_basic_auth only)."""
    return service.to_read(endpoint)


@router.patch("/{endpoint_id}", response_model=EndpointRead)
def update_endpoint(
    body: EndpointUpdate, endpoint: EndpointDep, user: CurrentUser, session: SessionDep
) -> EndpointRead:
    """Change a search endpoint."""
    teams.set_sharing(session=session, user=user, obj=endpoint, team_ids=body.team_ids)
    return service.to_read(service.update_endpoint(session=session, endpoint=endpoint, body=body))


@router.delete("/{endpoint_id}", status_code=204)
def delete_endpoint(endpoint: EndpointDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete a search endpoint no case uses (its owner only)."""
    access.require_owner(user=user, obj=endpoint, action="delete it")
    service.delete_endpoint(session=session, endpoint=endpoint)


@router.post("/{endpoint_id}/test", response_model=ConnectionReportRead)
async def test_endpoint(body: ConnectionTest, endpoint: EndpointDep) -> ConnectionReportRead:
    """Send one query and report the hit count and a sample doc, or the engine's error."""
    report = await service.check_connection(
        endpoint=endpoint,
        query=body.query,
        template=body.query_template,
        field_spec=body.field_spec,
    )
    sample = {"id": report.sample.id, "fields": report.sample.fields} if report.sample else None
    return ConnectionReportRead(
        ok=report.ok,
        num_found=report.num_found,
        sample=sample,
        message=report.message,
        duration_ms=report.duration_ms,
    )
