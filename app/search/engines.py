"""The registry of engine adapters, and what the client asks of whichever engine it calls.

Each engine's module holds its adapter (``adapter.EngineAdapter``); nothing else in the
search package asks which engine an endpoint is, and the rest of the app asks the adapter
(``adapter_for(endpoint.engine).answers_from_file``, say) instead of comparing engines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from app.search.adapter import EngineAdapter
from app.search.answers import RETRY_STATUSES, Answer, read_json, snippet
from app.search.elastic import ElasticAdapter
from app.search.errors import EngineError, EngineHTTPError, EngineUnavailable, TemplateError
from app.search.fieldspec import FieldSpec
from app.search.searchapi import SearchApiAdapter
from app.search.solr import SolrAdapter
from app.search.static import StaticAdapter
from app.search.templates import SAMPLE_QUERY, RenderContext
from app.search.types import EndpointConfig, Engine, SearchRequest, SearchResult
from app.search.vespa import VespaAdapter

__all__ = [
    "ADAPTERS",
    "adapter_for",
    "build_http_request",
    "build_ids_http_request",
    "http_error",
    "parse_answer",
    "validate_template",
]

ADAPTERS: Mapping[Engine, EngineAdapter] = {
    Engine.SOLR: SolrAdapter(),
    Engine.ELASTICSEARCH: ElasticAdapter(Engine.ELASTICSEARCH),
    Engine.OPENSEARCH: ElasticAdapter(Engine.OPENSEARCH),
    Engine.VESPA: VespaAdapter(),
    Engine.SEARCHAPI: SearchApiAdapter(),
    Engine.STATIC: StaticAdapter(),
}


def adapter_for(engine: Engine | str) -> EngineAdapter:
    """Return the adapter of the engine."""
    return ADAPTERS[Engine(engine)]


def build_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
) -> httpx.Request:
    """Return the httpx request for one query (headers and timeout; auth is added on send)."""
    return adapter_for(endpoint.engine).build_request(http, endpoint, request)


def build_ids_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
) -> httpx.Request:
    """Return the httpx request fetching these doc ids (auth is added on send)."""
    return adapter_for(endpoint.engine).build_ids_request(http, endpoint, ids, spec)


async def parse_answer(
    endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, explain: bool, rows: int = 10
) -> SearchResult:
    """Return the search result of a successful answer."""
    adapter = adapter_for(endpoint.engine)
    return await adapter.parse(endpoint, answer, spec, explain=explain, rows=rows)


async def http_error(endpoint: EndpointConfig, answer: Answer) -> EngineError:
    """Return the error an engine's 4xx/5xx answer reports (its own message when it has one)."""
    body: Any = await read_json(answer)
    extract = adapter_for(endpoint.engine).error_message
    detail = (extract(body) if isinstance(body, dict) else None) or snippet(answer)
    detail = (detail or answer.reason_phrase)[:300]
    message = f"HTTP {answer.status_code} from {endpoint.safe_url}: {detail}"
    if answer.status_code in RETRY_STATUSES:
        return EngineUnavailable(message)
    return EngineHTTPError(message, status_code=answer.status_code)


def validate_template(
    engine: Engine, template: str, *, case_options: Mapping[str, Any] | None = None
) -> None:
    """Raise TemplateError if ``template`` cannot be rendered into a request for ``engine``."""
    adapter = adapter_for(engine)
    if adapter.answers_from_file:
        return  # a result file: the template is never rendered
    if not template.strip():
        raise TemplateError("template is empty")
    adapter.validate_template(template, RenderContext(SAMPLE_QUERY, {}, case_options or {}, {}))
