"""Search endpoint pages: list, create, edit (secrets write-only) and test connection."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from app.deps import SessionDep, WebUser
from app.errors import Invalid
from app.models import User
from app.schemas.endpoints import EndpointCreate, EndpointRead, EndpointUpdate
from app.search import ConnectionReport
from app.services import endpoints as endpoint_service
from app.vocabulary import Engine, HttpMethod
from app.web.deps import FormDep, WebEndpointDep
from app.web.errors import HtmlErrorRoute
from app.web.forms import CsrfChecked, FormErrors, field_text, form_errors, parse_body
from app.web.templating import render

router = APIRouter(route_class=HtmlErrorRoute)

FIELDS = (
    "name",
    "engine",
    "url",
    "method",
    "headers",
    "basic_auth",
    "timeout_s",
    "requests_per_minute",
    "max_concurrency",
)
NUMBERS = ("timeout_s", "requests_per_minute", "max_concurrency")
NEW_ENDPOINT = {
    "name": "",
    "engine": Engine.OPENSEARCH,
    "url": "",
    "method": HttpMethod.GET,
    "headers": "",
    "basic_auth": "",
    "timeout_s": "10",
    "requests_per_minute": "0",
    "max_concurrency": "8",
}


@router.get("/endpoints", name="endpoints_page")
def endpoints_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the user's search endpoints."""
    data = endpoint_service.endpoints_page(session=session, user=user)
    return render(request, "endpoints.html", {"user": user, "page": data})


@router.get("/endpoints/new", name="endpoint_new_page")
def new_endpoint(request: Request, user: WebUser) -> Response:
    """Show an empty endpoint form."""
    return _form(request, user, None, dict(NEW_ENDPOINT))


@router.post("/endpoints", name="endpoint_create_submit")
def create_endpoint(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create an endpoint; a bad field re-renders the form (422)."""
    values = {name: field_text(form, name) for name in FIELDS}
    try:
        body = parse_body(EndpointCreate, _body_values(values, keep_blank_secrets=False))
        endpoint = endpoint_service.create_endpoint(session=session, user=user, body=body)
    except (FormErrors, Invalid) as exc:
        return _form(request, user, None, values, errors=_errors(exc), status_code=422)
    return RedirectResponse(
        str(request.url_for("endpoint_page", endpoint_id=endpoint.id)), status_code=303
    )


@router.get("/endpoints/{endpoint_id}", name="endpoint_page")
def endpoint_page(request: Request, endpoint: WebEndpointDep, user: WebUser) -> Response:
    """Show an endpoint's form; secrets appear only as header names and 'basic auth set'."""
    read = endpoint_service.to_read(endpoint)
    return _form(request, user, read, _values_of(read))


@router.post("/endpoints/{endpoint_id}", name="endpoint_update_submit")
def update_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save an endpoint; blank secret fields keep the stored secrets."""
    values = {name: field_text(form, name) for name in FIELDS}
    try:
        changes = _body_values(values, keep_blank_secrets=True)
        if field_text(form, "remove_basic_auth"):
            changes["basic_auth"] = None
        body = parse_body(EndpointUpdate, changes)
        endpoint_service.update_endpoint(session=session, endpoint=endpoint, body=body)
    except (FormErrors, Invalid) as exc:
        session.rollback()
        read = endpoint_service.to_read(endpoint)
        return _form(request, user, read, values, errors=_errors(exc), status_code=422)
    return RedirectResponse(
        str(request.url_for("endpoint_page", endpoint_id=endpoint.id)), status_code=303
    )


@router.post("/endpoints/{endpoint_id}/test", name="endpoint_test_submit")
async def test_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Send one query and show the hit count and a sample doc, or the engine's error."""
    query = field_text(form, "query").strip() or "test"
    field_spec = (
        field_text(form, "field_spec").strip() or endpoint_service.TEST_FIELD_SPECS[endpoint.engine]
    )
    report = await endpoint_service.check_connection(
        endpoint=endpoint, query=query, template=None, field_spec=field_spec
    )
    read = endpoint_service.to_read(endpoint)
    return _form(
        request,
        user,
        read,
        _values_of(read),
        report=report,
        test={"query": query, "field_spec": field_spec},
    )


def _form(
    request: Request,
    user: User,
    endpoint: EndpointRead | None,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
    report: ConnectionReport | None = None,
    test: dict[str, str] | None = None,
) -> Response:
    engine = values.get("engine") or Engine.OPENSEARCH
    known = engine in tuple(Engine)
    test_spec = endpoint_service.TEST_FIELD_SPECS[Engine(engine)] if known else ""
    context = {
        "user": user,
        "endpoint": endpoint,
        "form": values,
        "errors": errors or {},
        "report": report,
        "test": test or {"query": "test", "field_spec": test_spec},
    }
    return render(request, "endpoint.html", context, status_code=status_code)


def _errors(exc: FormErrors | Invalid) -> dict[str, str]:
    return {k.split(".")[0]: v for k, v in form_errors(exc).items()}


def _values_of(endpoint: EndpointRead) -> dict[str, str]:
    return {
        "name": endpoint.name,
        "engine": endpoint.engine,
        "url": endpoint.url,
        "method": endpoint.method,
        "headers": "",
        "basic_auth": "",
        "timeout_s": f"{endpoint.timeout_s:g}",
        "requests_per_minute": str(endpoint.requests_per_minute),
        "max_concurrency": str(endpoint.max_concurrency),
    }


def _body_values(values: dict[str, str], *, keep_blank_secrets: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        name: values[name].strip()
        for name in ("name", "engine", "url", "method", *NUMBERS)
        if values[name].strip() or not keep_blank_secrets
    }
    for name in NUMBERS:
        if not result.get(name):
            result.pop(name, None)
    headers = _headers(values["headers"])
    if headers or not keep_blank_secrets:
        result["headers"] = headers
    if values["basic_auth"]:
        result["basic_auth"] = values["basic_auth"]
    return result


def _headers(text: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise FormErrors({"headers": f"Write one 'Name: value' per line, not {line!r}."})
        headers[name.strip()] = value.strip()
    return headers
