"""Vespa: the query API's JSON body from a template, and its answers parsed.

The template is the JSON body of ``POST {url}/search/`` (YQL with placeholders, rendered as
Elasticsearch templates are). The adapter sets ``hits`` to the case's rows. An answer
(Vespa 8's default JSON renderer) holds ``root.fields.totalCount``, the hits in
``root.children[]`` (each with ``id``, ``relevance`` and ``fields``) and problems in
``root.errors[]`` (``code``, ``summary``, ``message``). A hit's explain is its
``fields.summaryfeatures`` (present when the rank profile lists summary-features).
"""

from __future__ import annotations

from typing import Any

import httpx

from app.search.answers import Answer, json_body
from app.search.errors import EngineResponseError, RequestBuildError
from app.search.fieldspec import FieldSpec, build_doc, is_missing, lookup_field
from app.search.http_request import headers_of, json_post, suffixed_url, unsuffixed_url
from app.search.templates import RenderContext, parse_json_body, render_json_template
from app.search.types import EndpointConfig, Engine, SearchRequest, SearchResult
from app.vocabulary import HttpMethod

__all__ = ["VespaAdapter", "build_vespa_body", "parse_vespa_response", "vespa_error_message"]


def build_vespa_body(request: SearchRequest) -> dict[str, Any]:
    """Return the JSON body for ``POST {url}/search/`` rendered from the request."""
    body = parse_json_body(
        render_json_template(request.template, RenderContext.from_request(request))
    )
    body["hits"] = request.rows
    return body


def _error_text(error: Any) -> str:
    if not isinstance(error, dict):
        return str(error)
    parts = [str(error[k]) for k in ("summary", "message") if error.get(k)]
    text = ": ".join(parts) or "unknown error"
    return f"{text} (code {error['code']})" if error.get("code") is not None else text


def vespa_error_message(body: Any) -> str | None:
    """Return the errors of a Vespa answer as one sentence, or None when it has none."""
    root = body.get("root") if isinstance(body, dict) else None
    errors = root.get("errors") if isinstance(root, dict) else None
    if not errors or not isinstance(errors, list):
        return None
    return "; ".join(_error_text(error) for error in errors[:5])


def _lookup(hit: dict[str, Any], name: str) -> Any:
    fields = hit.get("fields")
    value = lookup_field(fields, name) if isinstance(fields, dict) else None
    if (value is None or is_missing(value)) and name in hit:
        value = hit[name]  # id, relevance, source: the hit's own metadata
    return value


def parse_vespa_response(body: Any, spec: FieldSpec, *, explain: bool = False) -> SearchResult:
    """Return the docs and total of a Vespa search answer; raise EngineResponseError."""
    message = vespa_error_message(body)
    if message is not None:
        raise EngineResponseError(message)
    root = body.get("root") if isinstance(body, dict) else None
    if not isinstance(root, dict):
        raise EngineResponseError("the answer has no root object")
    children = root.get("children", [])
    if not isinstance(children, list):
        raise EngineResponseError("root.children is not a list")
    docs = []
    for position, hit in enumerate(children, start=1):
        if not isinstance(hit, dict):
            raise EngineResponseError(f"hit {position} is not a JSON object")
        shown = {}
        for name in spec.display_names:
            value = _lookup(hit, name)
            if value is not None and not is_missing(value):
                shown[name] = value
        fields = hit.get("fields")
        features = fields.get("summaryfeatures") if isinstance(fields, dict) else None
        docs.append(
            build_doc(
                shown,
                spec,
                position=position,
                raw_id=_lookup(hit, spec.id_field),
                explain=features if explain else None,
            )
        )
    total = (
        root.get("fields", {}).get("totalCount") if isinstance(root.get("fields"), dict) else None
    )
    if total is None:
        total = len(docs)
    if isinstance(total, bool) or not isinstance(total, int):
        raise EngineResponseError("root.fields.totalCount is not a number")
    return SearchResult(docs=docs, num_found=total)


class VespaAdapter:
    """Vespa: a JSON body POSTed to the endpoint's ``/search/``."""

    engine = Engine.VESPA
    label = "Vespa"
    answers_from_file = False
    needs_mapper = False
    holds_ubi_logs = False
    test_field_spec = "id:id title:title"

    def default_template(self, method: HttpMethod) -> str:
        return '{"yql": "select * from sources * where userQuery()", "query": "#$query##"}'

    def query_method(self, method: HttpMethod) -> HttpMethod:
        return HttpMethod.POST  # the query API's JSON body

    def search_url(self, url: str) -> str:
        return str(suffixed_url(url, "/search/"))

    def endpoint_url(self, search_url: str) -> str:
        return unsuffixed_url(search_url, "/search")

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        url = suffixed_url(endpoint.url, "/search/")
        return json_post(http, endpoint, url, build_vespa_body(request), headers_of(endpoint))

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        raise RequestBuildError(f"a {self.engine} endpoint cannot look docs up by id")

    async def parse(
        self, endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, *, explain: bool, rows: int
    ) -> SearchResult:
        return parse_vespa_response(await json_body(endpoint, answer), spec, explain=explain)

    def error_message(self, body: Any) -> str | None:
        return vespa_error_message(body)

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        parse_json_body(render_json_template(template, ctx))
