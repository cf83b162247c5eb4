"""Solr: request parameters from a template, and parsing of Solr 9 JSON responses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from app.search.answers import Answer, json_body
from app.search.errors import EngineResponseError
from app.search.fieldspec import FieldSpec, build_doc, doc_id, lookup_field, parse_field_spec
from app.search.http_request import headers_of, params_request
from app.search.lookup import build_solr_ids_params
from app.search.templates import RenderContext, render_solr_pairs
from app.search.types import EndpointConfig, Engine, SearchRequest, SearchResult
from app.vocabulary import HttpMethod

__all__ = ["SolrAdapter", "build_solr_params", "parse_solr_response", "solr_error_message"]

# The adapter owns these parameters; a template's own values for them are dropped.
_OWNED = frozenset({"rows", "fl", "wt"})
_EXPLAIN_OWNED = frozenset({"debug", "debugQuery", "debug.explain.structured"})


def build_solr_params(request: SearchRequest) -> list[tuple[str, str]]:
    """Return the decoded query parameters for a Solr request (repeated keys kept)."""
    spec = parse_field_spec(request.field_spec)
    owned = _OWNED | _EXPLAIN_OWNED if request.explain else _OWNED
    pairs = render_solr_pairs(request.template, RenderContext.from_request(request))
    params = [(k, v) for k, v in pairs if k not in owned]
    params += [("rows", str(request.rows)), ("fl", ",".join(spec.all_fields())), ("wt", "json")]
    if request.explain:
        params += [("debug", "true"), ("debug.explain.structured", "true")]
    return params


def solr_error_message(body: Any) -> str | None:
    """Return Solr's error message from an error body, or None when there is none."""
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), Mapping):
        return None
    error = body["error"]
    msg = error.get("msg")
    if isinstance(msg, str) and msg:
        return msg
    trace = error.get("trace")
    if isinstance(trace, str) and trace.strip():
        return trace.strip().splitlines()[0]
    return f"Solr error {error.get('code', '')}".strip()


def _explain_for(debug: Any, doc_id: str) -> Any:
    if not isinstance(debug, Mapping):
        return None
    explain = debug.get("explain")
    return explain.get(doc_id) if isinstance(explain, Mapping) else None


def parse_solr_response(body: Any, spec: FieldSpec, *, explain: bool) -> SearchResult:
    """Return the docs and numFound of a Solr JSON response; raise EngineResponseError."""
    message = solr_error_message(body)
    if message is not None:
        raise EngineResponseError(f"Solr error: {message}")
    response = body.get("response") if isinstance(body, Mapping) else None
    if not isinstance(response, Mapping):
        raise EngineResponseError("Solr response has no 'response' object")
    num_found, raw_docs = response.get("numFound"), response.get("docs")
    if not isinstance(num_found, int) or not isinstance(raw_docs, list):
        raise EngineResponseError("Solr response lacks response.numFound or response.docs")
    docs = []
    for position, raw in enumerate(raw_docs, start=1):
        if not isinstance(raw, Mapping):
            raise EngineResponseError(f"doc {position} is not a JSON object")
        raw_id = lookup_field(raw, spec.id_field)
        ident = doc_id(raw_id, position=position, id_field=spec.id_field)
        doc_explain = _explain_for(body.get("debug"), ident) if explain else None
        docs.append(build_doc(raw, spec, position=position, raw_id=ident, explain=doc_explain))
    return SearchResult(docs=docs, num_found=num_found)


class SolrAdapter:
    """Solr: a query's parameters from its template, sent as GET or as a POST form."""

    engine = Engine.SOLR
    label = "Solr"
    answers_from_file = False
    needs_mapper = False
    holds_ubi_logs = False
    # Solr's unique key is a stored field, named in the schema (most often "id").
    test_field_spec = "id:id title:title"

    def default_template(self, method: HttpMethod) -> str:
        return "q=#$query##"  # the same parameters, in the URL or as a POSTed form

    def query_method(self, method: HttpMethod) -> HttpMethod:
        return method

    def search_url(self, url: str) -> str:
        return url  # the request handler itself (…/select)

    def endpoint_url(self, search_url: str) -> str:
        return search_url

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        return params_request(http, endpoint, build_solr_params(request), headers_of(endpoint))

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        params = list(build_solr_ids_params(ids, spec).items())
        return params_request(http, endpoint, params, headers_of(endpoint))

    async def parse(
        self, endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, *, explain: bool, rows: int
    ) -> SearchResult:
        return parse_solr_response(await json_body(endpoint, answer), spec, explain=explain)

    def error_message(self, body: Any) -> str | None:
        return solr_error_message(body)

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        render_solr_pairs(template, ctx)
