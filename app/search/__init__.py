"""Search engine adapters: pure request builders and response parsers, plus an httpx client.

Solr, Elasticsearch and OpenSearch are supported. Builders (:func:`build_solr_params`,
:func:`build_es_body`) and parsers (:func:`parse_solr_response`, :func:`parse_es_response`)
are pure functions of plain data; :class:`SearchClient` does the I/O through one shared
``httpx.AsyncClient`` with per-endpoint limits, timeouts and a bounded retry.

Every exception derives from :class:`SearchError`; :mod:`app.search.errors` draws the tree.
:meth:`SearchClient.search` raises :class:`EngineError` subclasses only; a template or field
spec problem met while building one query's request is raised as
:class:`RequestBuildError`. Template rules are documented in :mod:`app.search.templates`.
"""

from app.search.adapter import EngineAdapter
from app.search.client import SearchClient
from app.search.connection import ConnectionReport, try_connection
from app.search.elastic import build_es_body, es_error_message, parse_es_response
from app.search.engines import (
    adapter_for,
    build_http_request,
    build_ids_http_request,
    validate_template,
)
from app.search.errors import (
    EngineError,
    EngineHTTPError,
    EngineResponseError,
    EngineTimeout,
    EngineUnavailable,
    FieldSpecError,
    RequestBuildError,
    SearchError,
    TemplateError,
)
from app.search.fieldspec import FieldSpec, parse_field_spec
from app.search.lookup import MAX_LOOKUP_IDS, build_es_ids_body, build_solr_ids_params
from app.search.solr import build_solr_params, parse_solr_response, solr_error_message
from app.search.templates import DEFAULT_KNOB, extract_knobs
from app.search.types import (
    DEFAULT_FIELD_SPEC,
    ENGINES,
    Doc,
    EndpointConfig,
    Engine,
    SearchRequest,
    SearchResult,
)

__all__ = [
    "DEFAULT_FIELD_SPEC",
    "DEFAULT_KNOB",
    "ENGINES",
    "MAX_LOOKUP_IDS",
    "ConnectionReport",
    "Doc",
    "EndpointConfig",
    "Engine",
    "EngineAdapter",
    "EngineError",
    "EngineHTTPError",
    "EngineResponseError",
    "EngineTimeout",
    "EngineUnavailable",
    "FieldSpec",
    "FieldSpecError",
    "RequestBuildError",
    "SearchClient",
    "SearchError",
    "SearchRequest",
    "SearchResult",
    "TemplateError",
    "adapter_for",
    "build_es_body",
    "build_es_ids_body",
    "build_http_request",
    "build_ids_http_request",
    "build_solr_ids_params",
    "build_solr_params",
    "es_error_message",
    "extract_knobs",
    "parse_es_response",
    "parse_field_spec",
    "parse_solr_response",
    "solr_error_message",
    "try_connection",
    "validate_template",
]
