"""Elasticsearch and OpenSearch: request bodies from a template, and response parsing.

An answer is parsed JSON, whose objects are dicts: the parser checks ``isinstance(x, dict)``,
a fraction of the cost of a check against the Mapping ABC, for every field of every hit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from app.search.answers import Answer, json_body
from app.search.errors import EngineResponseError
from app.search.fieldspec import FieldSpec, build_doc, is_missing, lookup_field, parse_field_spec
from app.search.http_request import headers_of, json_post, suffixed_url, unsuffixed_url
from app.search.lookup import build_es_ids_body
from app.search.templates import RenderContext, parse_json_body, render_json_template
from app.search.types import (
    DEFAULT_FIELD_SPEC,
    EndpointConfig,
    Engine,
    SearchRequest,
    SearchResult,
)
from app.vocabulary import HttpMethod

__all__ = ["ElasticAdapter", "build_es_body", "es_error_message", "parse_es_response"]


def _source_fields(spec: FieldSpec) -> list[str]:
    # _id, _score, _index … are hit metadata, never part of _source.
    return [name for name in spec.all_fields() if not name.startswith("_")]


def build_es_body(request: SearchRequest) -> dict[str, Any]:
    """Return the JSON body for ``POST {index}/_search`` rendered from the request."""
    spec = parse_field_spec(request.field_spec)
    body = parse_json_body(
        render_json_template(request.template, RenderContext.from_request(request))
    )
    body["size"] = request.rows
    fields = _source_fields(spec)
    body["_source"] = fields if fields else False
    if request.explain:
        body["explain"] = True
    else:
        body.pop("explain", None)
    return body


def _reason(error: Mapping[str, Any]) -> str:
    kind, reason = error.get("type"), error.get("reason")
    text = f"{kind}: {reason}" if kind and reason else str(reason or kind or "unknown error")
    if isinstance(error.get("line"), int) and isinstance(error.get("col"), int):
        text += f" (line {error['line']}, column {error['col']})"
    return text


def es_error_message(body: Any) -> str | None:
    """Return a readable message from an ES/OS error body, or None when there is none."""
    if not isinstance(body, Mapping) or "error" not in body:
        return None
    error = body["error"]
    if isinstance(error, str):
        return error
    if not isinstance(error, Mapping):
        return str(error)
    message = _reason(error)
    caused_by = error.get("caused_by")
    if isinstance(caused_by, Mapping) and caused_by.get("reason"):
        message += f"; caused by: {caused_by['reason']}"
    return message


def _total(hits: Mapping[str, Any], count: int) -> int:
    total = hits.get("total")
    if isinstance(total, dict):
        total = total.get("value")
    if total is None:
        return count
    if not isinstance(total, int) or isinstance(total, bool):
        raise EngineResponseError("hits.total is neither a number nor {value, relation}")
    return total


def _lookup_hit(hit: Mapping[str, Any], name: str) -> Any:
    if name.startswith("_") and name in hit:
        return hit[name]
    source = hit.get("_source")
    value = lookup_field(source, name) if isinstance(source, dict) else None
    if (value is None or is_missing(value)) and isinstance(hit.get("fields"), dict):
        value = lookup_field(hit["fields"], name)
    return value


def _hit_source(hit: Mapping[str, Any], spec: FieldSpec) -> dict[str, Any]:
    found = {}
    for name in spec.display_names:
        value = _lookup_hit(hit, name)
        if value is not None and not is_missing(value):
            found[name] = value
    return found


def parse_es_response(body: Any, spec: FieldSpec) -> SearchResult:
    """Return the docs and total of an ES/OS search response; raise EngineResponseError."""
    message = es_error_message(body)
    if message is not None:
        raise EngineResponseError(message)
    hits = body.get("hits") if isinstance(body, dict) else None
    if not isinstance(hits, dict) or not isinstance(hits.get("hits"), list):
        raise EngineResponseError("response has no hits.hits list")
    docs = []
    for position, hit in enumerate(hits["hits"], start=1):
        if not isinstance(hit, dict):
            raise EngineResponseError(f"hit {position} is not a JSON object")
        fields = _hit_source(hit, spec)
        raw_id = _lookup_hit(hit, spec.id_field)
        explain = hit.get("_explanation")
        docs.append(build_doc(fields, spec, position=position, raw_id=raw_id, explain=explain))
    return SearchResult(docs=docs, num_found=_total(hits, len(docs)))


_SEARCH = "/_search"
_LABELS = {Engine.ELASTICSEARCH: "Elasticsearch", Engine.OPENSEARCH: "OpenSearch"}
_TEMPLATE = '{"query": {"multi_match": {"query": "#$query##", "fields": ["title"]}}}'


class ElasticAdapter:
    """Elasticsearch and OpenSearch: a JSON body POSTed to the index's ``_search``."""

    answers_from_file = False
    needs_mapper = False
    holds_ubi_logs = True  # the UBI plugin's ubi_queries and ubi_events indexes
    test_field_spec = DEFAULT_FIELD_SPEC  # a hit's id is its _id

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.label = _LABELS[engine]

    def default_template(self, method: HttpMethod) -> str:
        return _TEMPLATE

    def query_method(self, method: HttpMethod) -> HttpMethod:
        return HttpMethod.POST  # a JSON body, whatever the endpoint says

    def search_url(self, url: str) -> str:
        return str(suffixed_url(url, _SEARCH))

    def endpoint_url(self, search_url: str) -> str:
        return unsuffixed_url(search_url, _SEARCH)

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        url = suffixed_url(endpoint.url, _SEARCH)
        return json_post(http, endpoint, url, build_es_body(request), headers_of(endpoint))

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        url = suffixed_url(endpoint.url, _SEARCH)
        return json_post(http, endpoint, url, build_es_ids_body(ids, spec), headers_of(endpoint))

    async def parse(
        self, endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, *, explain: bool, rows: int
    ) -> SearchResult:
        return parse_es_response(await json_body(endpoint, answer), spec)

    def error_message(self, body: Any) -> str | None:
        return es_error_message(body)

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        parse_json_body(render_json_template(template, ctx))
