"""Search API endpoints: any HTTP search service, its answers read by the user's mapper.

GET sends the rendered template as query parameters (``a=1&b=#$query##``; each value is
URL-encoded when sent, so ``café & crème`` arrives intact); POST sends it as a JSON body.
The answer, parsed JSON or else the raw text (an HTML page, say), goes to the endpoint's
``docsMapper(data)`` and ``numberOfResultsMapper(data)`` in the JavaScript sandbox
(:mod:`app.sandbox.mapper`). The docs keep the fields the mapper gave; ids become strings;
the case's rows limits how many are kept.
"""

from __future__ import annotations

import functools
from typing import Any

import httpx

from app.sandbox import in_scoring_thread
from app.sandbox.mapper import MapperError, run_mapper
from app.search.answers import TOO_DEEP, Answer, read_json
from app.search.errors import EngineResponseError, RequestBuildError
from app.search.fieldspec import FieldSpec
from app.search.http_request import base_url, headers_of, json_post, timeout_of
from app.search.templates import (
    RenderContext,
    parse_json_body,
    render_json_template,
    render_solr_pairs,
)
from app.search.types import Doc, EndpointConfig, Engine, SearchRequest, SearchResult
from app.vocabulary import HttpMethod

__all__ = [
    "SearchApiAdapter",
    "build_searchapi_body",
    "build_searchapi_params",
    "map_answer",
    "mapped_result",
]


# A search API may answer JSON or HTML: the mapper reads either.
_ACCEPT = "application/json, text/html;q=0.9, */*;q=0.5"


def build_searchapi_params(request: SearchRequest) -> list[tuple[str, str]]:
    """Return the (name, value) query parameters of a GET search API request."""
    return render_solr_pairs(request.template, RenderContext.from_request(request))


def build_searchapi_body(request: SearchRequest) -> dict[str, Any]:
    """Return the JSON body of a POST search API request."""
    return parse_json_body(
        render_json_template(request.template, RenderContext.from_request(request))
    )


def mapped_result(docs: list[dict[str, Any]], num_found: int, rows: int) -> SearchResult:
    """Return a search result from a mapper's docs (ids already strings), cut to ``rows``."""
    kept = [
        Doc(
            id=doc["id"],
            position=position,
            fields={k: v for k, v in doc.items() if k != "id"},
        )
        for position, doc in enumerate(docs[:rows], start=1)
    ]
    return SearchResult(docs=kept, num_found=num_found)


async def map_answer(
    code: str, body: Any, text: str, rows: int, *, owner: int | None = None
) -> SearchResult:
    """Return the mapper's reading of an answer (``body`` parsed JSON or None for text).

    ``owner`` (a user id) is whose share of the sandbox's workers the mapper takes.
    """
    is_json = body is not None
    try:
        mapped = await in_scoring_thread(
            functools.partial(run_mapper, code, text, is_json=is_json, owner=owner)
        )
    except MapperError as exc:
        raise EngineResponseError(str(exc)) from exc
    return mapped_result(mapped.docs, mapped.num_found, rows)


class SearchApiAdapter:
    """Any JSON or HTML API (GET parameters or a POSTed JSON body), read by the endpoint's
    JavaScript mapper."""

    engine = Engine.SEARCHAPI
    label = "Search API"
    answers_from_file = False
    needs_mapper = True  # docsMapper(data) and numberOfResultsMapper(data)
    holds_ubi_logs = False
    test_field_spec = "id:id title:title"

    def default_template(self, method: HttpMethod) -> str:
        # POST sends the template as a JSON body, GET as query parameters.
        return '{"q": "#$query##"}' if method == HttpMethod.POST else "q=#$query##"

    def query_method(self, method: HttpMethod) -> HttpMethod:
        return method

    def search_url(self, url: str) -> str:
        return url  # the service's own URL, called as it is

    def endpoint_url(self, search_url: str) -> str:
        return search_url

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        headers = headers_of(endpoint, accept=_ACCEPT)
        if endpoint.method == "POST":
            url = base_url(endpoint.url)
            return json_post(http, endpoint, url, build_searchapi_body(request), headers)
        full = base_url(endpoint.url).copy_merge_params(tuple(build_searchapi_params(request)))
        return http.build_request("GET", full, headers=headers, timeout=timeout_of(endpoint))

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        raise RequestBuildError(f"a {self.engine} endpoint cannot look docs up by id")

    async def parse(
        self, endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, *, explain: bool, rows: int
    ) -> SearchResult:
        body = await read_json(answer)
        text = answer.content.decode("utf-8", "replace")
        usable = body if body is not None and body is not TOO_DEEP else None
        return await map_answer(
            endpoint.mapper_code or "", usable, text, rows, owner=endpoint.sandbox_owner
        )

    def error_message(self, body: Any) -> str | None:
        return None  # an unknown service: its answer's start says most

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        # A GET template is parameters like Solr's; a POST template is JSON.
        if template.lstrip().startswith("{"):
            parse_json_body(render_json_template(template, ctx))
        else:
            render_solr_pairs(template, ctx)
