"""Search endpoints: create, change, list, delete, test, and their engine config."""

from __future__ import annotations

from typing import Literal, cast

import httpx
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.models import SearchEndpoint, Try, User
from app.schemas.endpoints import EndpointCreate, EndpointRead, EndpointUpdate
from app.search import ConnectionReport, EndpointConfig, SearchRequest, test_connection
from app.services.access import visible_owner_ids

DEFAULT_TEMPLATES = {
    "solr": "q=#$query##",
    "elasticsearch": '{"query": {"multi_match": {"query": "#$query##", "fields": ["title"]}}}',
    "opensearch": '{"query": {"multi_match": {"query": "#$query##", "fields": ["title"]}}}',
}


def list_endpoints(*, session: Session, user: User) -> list[SearchEndpoint]:
    """Return the endpoints the user may see, by name."""
    stmt = (
        select(SearchEndpoint)
        .where(SearchEndpoint.owner_id.in_(visible_owner_ids(user=user)))
        .order_by(SearchEndpoint.name, SearchEndpoint.id)
    )
    return list(session.scalars(stmt))


def create_endpoint(*, session: Session, user: User, body: EndpointCreate) -> SearchEndpoint:
    """Create and return an endpoint owned by the user."""
    endpoint = SearchEndpoint(owner_id=user.id, **body.model_dump())
    session.add(endpoint)
    session.commit()
    return endpoint


def update_endpoint(
    *, session: Session, endpoint: SearchEndpoint, body: EndpointUpdate
) -> SearchEndpoint:
    """Apply the given fields; an empty basic_auth string removes the credentials."""
    for name, value in body.model_dump(exclude_unset=True).items():
        if name == "basic_auth" and value == "":
            value = None
        if value is None and name != "basic_auth":
            continue
        setattr(endpoint, name, value)
    session.commit()
    return endpoint


def delete_endpoint(*, session: Session, endpoint: SearchEndpoint) -> None:
    """Delete an endpoint that no case's try uses."""
    used = session.scalar(
        select(func.count()).select_from(Try).where(Try.search_endpoint_id == endpoint.id)
    )
    if used:
        raise Conflict("This search endpoint is used by cases; point them elsewhere first.")
    session.delete(endpoint)
    session.commit()


def to_read(endpoint: SearchEndpoint) -> EndpointRead:
    """Return the public view of an endpoint: secrets reduced to their presence."""
    return EndpointRead(
        id=endpoint.id,
        name=endpoint.name,
        engine=endpoint.engine,
        url=endpoint.url,
        method=endpoint.method,
        header_names=sorted(endpoint.headers or {}),
        has_basic_auth=bool(endpoint.basic_auth),
        timeout_s=endpoint.timeout_s,
        requests_per_minute=endpoint.requests_per_minute,
        max_concurrency=endpoint.max_concurrency,
    )


def engine_config(endpoint: SearchEndpoint) -> EndpointConfig:
    """Return the plain engine settings the search adapters take."""
    engine = cast(Literal["solr", "elasticsearch", "opensearch"], endpoint.engine)
    method = cast(Literal["GET", "POST"], endpoint.method)
    return EndpointConfig(
        engine=engine,
        url=endpoint.url,
        method=method,
        headers=dict(endpoint.headers or {}),
        basic_auth=endpoint.basic_auth,
        timeout_s=endpoint.timeout_s,
        requests_per_minute=endpoint.requests_per_minute,
        max_concurrency=endpoint.max_concurrency,
    )


async def check_connection(
    *, endpoint: SearchEndpoint, query: str, template: str | None, field_spec: str
) -> ConnectionReport:
    """Send one query to the endpoint and report the hit count, a sample doc or the error."""
    request = SearchRequest(
        template=template or DEFAULT_TEMPLATES[endpoint.engine],
        query_text=query,
        field_spec=field_spec,
        rows=1,
    )
    async with httpx.AsyncClient() as http:
        return await test_connection(http, engine_config(endpoint), request)
