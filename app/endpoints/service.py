"""Search endpoints: create, change, list, delete, test, and their engine config."""

from __future__ import annotations

import dataclasses

import httpx
from sqlalchemy import func, select
from sqlalchemy.orm import Session, object_session, selectinload

from app import access
from app.access import visible_clause
from app.credentials import origin, split_credentials
from app.endpoints import results
from app.endpoints.schemas import (
    EndpointCreate,
    EndpointOption,
    EndpointRead,
    EndpointsPage,
    EndpointUpdate,
    engine_problem,
)
from app.errors import Conflict, Invalid
from app.models import Case, SearchEndpoint, Try, User
from app.outbound.transport import engine_http_client
from app.search import ConnectionReport, EndpointConfig, SearchRequest, adapter_for, try_connection
from app.search.engines import ADAPTERS
from app.secret_box import SecretUnreadable, opened
from app.teams import service as teams
from app.vocabulary import Engine, HttpMethod

# Each engine's adapter declares its default template and test field spec; these tables
# gather them, by engine, for the pages and forms that offer every engine.
DEFAULT_TEMPLATES: dict[Engine, str] = {
    engine: adapter.default_template(HttpMethod.GET) for engine, adapter in ADAPTERS.items()
}
TEST_FIELD_SPECS: dict[Engine, str] = {
    engine: adapter.test_field_spec for engine, adapter in ADAPTERS.items()
}


def default_template(engine: Engine | str, method: HttpMethod | str = HttpMethod.GET) -> str:
    """Return the template a new case on such an endpoint starts with."""
    return adapter_for(engine).default_template(HttpMethod(method))


def list_endpoints(*, session: Session, user: User) -> list[SearchEndpoint]:
    """Return the endpoints the user may see, by name."""
    stmt = (
        select(SearchEndpoint)
        .where(visible_clause(SearchEndpoint, user=user))
        .options(selectinload(SearchEndpoint.teams))
        .order_by(SearchEndpoint.name, SearchEndpoint.id)
    )
    return list(session.scalars(stmt))


def create_endpoint(*, session: Session, user: User, body: EndpointCreate) -> SearchEndpoint:
    """Create and return an endpoint owned by the user; URL credentials become basic auth."""
    values = body.model_dump(exclude={"team_ids"})
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    values["url"], values["basic_auth"] = _split_credentials(values["url"], values["basic_auth"])
    endpoint = SearchEndpoint(owner_id=user.id, **values)
    endpoint.teams = shared
    session.add(endpoint)
    session.flush()
    return endpoint


def update_endpoint(
    *, session: Session, user: User, endpoint: SearchEndpoint, body: EndpointUpdate
) -> SearchEndpoint:
    """Apply the given fields; an empty basic_auth string removes the credentials.

    Pointing the endpoint at another origin (scheme, host or port) drops its headers and
    basic auth unless they are sent again in the same request: secrets meant for one server
    are never sent to another.
    """
    teams.set_sharing(session=session, user=user, obj=endpoint, team_ids=body.team_ids)
    changes = body.model_dump(exclude_unset=True, exclude={"team_ids"})
    if changes.get("url") is not None:
        changes["url"], auth = _split_credentials(changes["url"], changes.get("basic_auth"))
        if auth is not None:
            changes["basic_auth"] = auth
        if origin(changes["url"]) != origin(endpoint.url):
            # Whatever else the body says ("headers": null included), none stay.
            if changes.get("headers") is None:
                changes["headers"] = {}
            if changes.get("basic_auth") is None:
                changes["basic_auth"] = ""
    for name, value in changes.items():
        if name == "basic_auth" and value == "":
            value = None
        if value is None and name != "basic_auth":
            continue
        setattr(endpoint, name, value)
    problem = engine_problem(endpoint.engine, endpoint.url, endpoint.mapper_code)
    if problem is not None:
        session.rollback()
        raise Invalid("engine", problem[0].upper() + problem[1:] + ".")
    session.flush()
    return endpoint


def _split_credentials(url: str, basic_auth: str | None) -> tuple[str, str | None]:
    """Return the URL without ``user:pass@`` and the basic auth to use instead."""
    try:
        clean, credentials = split_credentials(url)
    except httpx.InvalidURL as exc:
        raise Invalid("url", "That is not a valid URL.") from exc
    if credentials is None:
        return url, basic_auth
    if basic_auth:
        raise Invalid("url", "Give credentials either in the URL or as basic_auth, not both.")
    return clean, credentials


def delete_endpoint(*, session: Session, user: User, endpoint: SearchEndpoint) -> None:
    """Delete (its owner only) an endpoint that no case's try uses."""
    access.require_owner(user=user, obj=endpoint, action="delete it")
    used = session.scalar(
        select(func.count()).select_from(Try).where(Try.search_endpoint_id == endpoint.id)
    )
    if used:
        raise Conflict("This search endpoint is used by cases; point them elsewhere first.")
    session.delete(endpoint)
    session.flush()


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
        team_ids=teams.team_ids(endpoint),
        mapper_code=endpoint.mapper_code,
        has_results=_has_results(endpoint),
    )


def _has_results(endpoint: SearchEndpoint) -> bool:
    session = object_session(endpoint)
    if not adapter_for(endpoint.engine).answers_from_file or session is None:
        return False
    return results.has_results(session=session, endpoint_id=endpoint.id)


def engine_config(endpoint: SearchEndpoint, *, sandbox_owner: int | None = None) -> EndpointConfig:
    """Return the plain engine settings the search adapters take, secrets decrypted.

    Secrets that cannot be decrypted (the key they were sealed with is gone) leave the
    config without them and with ``secrets_error``: each query then fails saying so.
    ``sandbox_owner``: the user whose share of the JavaScript sandbox a mapper takes (the
    caller, the case's owner); the endpoint's owner when not given.
    """
    secrets_error = None
    try:
        headers = opened(endpoint, "headers")
        basic_auth = opened(endpoint, "basic_auth")
    except SecretUnreadable as exc:
        headers, basic_auth = {}, None
        secrets_error = f"The search endpoint's headers or basic auth are unusable: {exc}"
    return EndpointConfig(
        engine=endpoint.engine,
        url=endpoint.url,
        method=endpoint.method,
        headers=headers,
        basic_auth=basic_auth,
        secrets_error=secrets_error,
        timeout_s=endpoint.timeout_s,
        requests_per_minute=endpoint.requests_per_minute,
        max_concurrency=endpoint.max_concurrency,
        mapper_code=endpoint.mapper_code,
        sandbox_owner=endpoint.owner_id if sandbox_owner is None else sandbox_owner,
    )


async def check_connection(
    *,
    endpoint: SearchEndpoint,
    query: str,
    template: str | None,
    field_spec: str,
    timeout_s: float | None = None,
    knobs: dict[str, float] | None = None,
) -> ConnectionReport:
    """Send one query to the endpoint and report the hit count, a sample doc or the error.

    ``timeout_s`` shortens the endpoint's own timeout (a check after saving should not make
    the user wait for a host that never answers).
    """
    request = SearchRequest(
        template=template or default_template(endpoint.engine, endpoint.method),
        query_text=query,
        field_spec=field_spec,
        rows=1,
        knobs=knobs or {},
    )
    config = engine_config(endpoint)
    if timeout_s is not None:
        config = dataclasses.replace(config, timeout_s=min(config.timeout_s, timeout_s))
    async with engine_http_client() as http:  # guarded, as every outbound call
        return await try_connection(http, config, request)


@dataclasses.dataclass(frozen=True)
class SaveCheck:
    """What the check after a save found: a failure to warn about, or a note."""

    warning: str | None = None
    note: str | None = None


async def check_after_save(
    *, session: Session, user: User, endpoint: SearchEndpoint, timeout_s: float
) -> SaveCheck:
    """Check a saved endpoint the way a run would use it.

    A result-file endpoint is read, not called: the check is whether results are stored.
    Another is sent one query with the template of the user's latest case on it (knobs
    included), or else the template a new case on it would start with.
    """
    adapter = adapter_for(endpoint.engine)
    if adapter.answers_from_file:
        if results.has_results(session=session, endpoint_id=endpoint.id):
            return SaveCheck()
        return SaveCheck(note="No results stored yet: upload a result file below.")
    latest = session.scalars(
        select(Try)
        .join(Case, Case.id == Try.case_id)
        .where(
            Try.search_endpoint_id == endpoint.id,
            Try.number == Case.current_try_number,
            Case.owner_id == user.id,
        )
        .order_by(Try.id.desc())
        .limit(1)
    ).first()
    report = await check_connection(
        endpoint=endpoint,
        query="test",
        template=latest.query_template if latest is not None else None,
        field_spec=adapter.test_field_spec,
        timeout_s=timeout_s,
        knobs=dict(latest.knobs) if latest is not None else None,
    )
    if report.ok:
        return SaveCheck()
    return SaveCheck(
        warning=f"The endpoint is saved, but a test query to {endpoint.url} failed: "
        f"{report.message}"
    )


def endpoint_options(*, session: Session, user: User) -> list[EndpointOption]:
    """Return the endpoints the user may pick for a case, as form choices."""
    return [
        EndpointOption(
            id=e.id,
            name=e.name,
            engine=e.engine,
            default_template=default_template(e.engine, e.method),
        )
        for e in list_endpoints(session=session, user=user)
    ]


def endpoints_page(*, session: Session, user: User) -> EndpointsPage:
    """Return the user's search endpoints (secrets reduced to their presence)."""
    return EndpointsPage(endpoints=[to_read(e) for e in list_endpoints(session=session, user=user)])
