"""Solr: parameter building, response parsing, and the client over a mock transport."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from app.search import (
    EndpointConfig,
    EngineHTTPError,
    EngineResponseError,
    RequestBuildError,
    SearchClient,
    SearchRequest,
    build_solr_params,
    parse_field_spec,
    parse_solr_response,
)
from app.vocabulary import Engine, HttpMethod
from tests.search import solr_bodies

TEMPLATE = "q=#$query##&defType=edismax\nqf=title^##title_boost## overview"
SPEC = "id:id title:title genre"


def request(**overrides: Any) -> SearchRequest:
    values: dict[str, Any] = {"template": TEMPLATE, "query_text": "star wars", "field_spec": SPEC}
    return SearchRequest(**{**values, **overrides})


def test_build_params() -> None:
    assert build_solr_params(request(knobs={"title_boost": 3})) == [
        ("q", "star wars"),
        ("defType", "edismax"),
        ("qf", "title^3 overview"),
        ("rows", "10"),
        ("fl", "id,title,genre"),
        ("wt", "json"),
    ]


def test_build_params_with_explain_replaces_template_owned_params() -> None:
    template = "q=#$query##&rows=99&fl=*&wt=xml&debug=timing"
    assert build_solr_params(request(template=template, rows=5, explain=True)) == [
        ("q", "star wars"),
        ("rows", "5"),
        ("fl", "id,title,genre"),
        ("wt", "json"),
        ("debug", "true"),
        ("debug.explain.structured", "true"),
    ]


def test_parse_response() -> None:
    result = parse_solr_response(solr_bodies.OK, parse_field_spec(SPEC), explain=False)
    assert result.num_found == 37
    assert [(d.id, d.position) for d in result.docs] == [("913", 1), ("773", 2)]
    assert result.docs[0].fields == {
        "title": "Star Wars Ep. IV: A New Hope",
        "genre": ["Adventure"],
    }
    assert result.docs[1].fields == {"title": "Star Wars Ep. VI: Return of the Jedi"}
    assert result.docs[0].explain is None


def test_parse_structured_explain() -> None:
    result = parse_solr_response(solr_bodies.WITH_DEBUG, parse_field_spec(SPEC), explain=True)
    assert result.docs[0].explain == solr_bodies.EXPLAIN_913
    assert result.docs[1].explain == solr_bodies.WITH_DEBUG["debug"]["explain"]["773"]


def test_parse_error_body_uses_solr_message() -> None:
    with pytest.raises(EngineResponseError, match="undefined field bogus"):
        parse_solr_response(solr_bodies.UNDEFINED_FIELD, parse_field_spec(SPEC), explain=False)


def test_parse_missing_id_names_the_field_and_position() -> None:
    body = {
        **solr_bodies.OK,
        "response": {
            "numFound": 3,
            "start": 0,
            "docs": [{"id": "1"}, {"id": "2"}, {"title": "no id"}],
        },
    }
    with pytest.raises(EngineResponseError, match=r"^doc 3 has no id field 'id'$"):
        parse_solr_response(body, parse_field_spec(SPEC), explain=False)


@pytest.mark.parametrize("body", [[], {"response": {"docs": []}}, {"responseHeader": {}}])
def test_parse_unexpected_shape(body: Any) -> None:
    with pytest.raises(EngineResponseError):
        parse_solr_response(body, parse_field_spec(SPEC), explain=False)


def run_search(handler: Any, endpoint: EndpointConfig, req: SearchRequest) -> Any:
    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            return await SearchClient(http).search(endpoint, req)

    return asyncio.run(go())


def test_client_get_sends_params_in_query_string() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json=solr_bodies.OK)

    endpoint = EndpointConfig(
        Engine.SOLR, "http://solr:8983/solr/movies/select?shards.tolerant=true"
    )
    result = run_search(handler, endpoint, request(query_text="100% a&b"))
    assert result.num_found == 37
    (sent,) = seen
    assert sent.method == "GET"
    assert sent.url.path == "/solr/movies/select"
    assert sent.url.params.multi_items()[:3] == [
        ("shards.tolerant", "true"),
        ("q", "100% a&b"),
        ("defType", "edismax"),
    ]
    assert b"q=100%25+a%26b" in sent.url.raw_path


def test_client_post_sends_a_form() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json=solr_bodies.WITH_DEBUG)

    endpoint = EndpointConfig(
        Engine.SOLR, "http://solr:8983/solr/movies/select", method=HttpMethod.POST
    )
    result = run_search(handler, endpoint, request(explain=True))
    assert result.docs[0].explain == solr_bodies.EXPLAIN_913
    (sent,) = seen
    assert sent.method == "POST"
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert sent.url.query == b""
    form = parse_qsl(sent.content.decode())
    assert form == build_solr_params(request(explain=True))


def test_client_400_raises_http_error_with_solr_message() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(400, json=solr_bodies.UNDEFINED_FIELD)

    endpoint = EndpointConfig(Engine.SOLR, "http://solr:8983/solr/movies/select")
    with pytest.raises(EngineHTTPError, match=r"HTTP 400 .*: undefined field bogus") as info:
        run_search(handler, endpoint, request())
    assert info.value.status_code == 400
    assert len(calls) == 1


def test_client_bad_template_raises_request_build_error() -> None:
    endpoint = EndpointConfig(Engine.SOLR, "http://solr:8983/solr/movies/select")
    with pytest.raises(RequestBuildError, match="not key=value"):
        run_search(lambda r: httpx.Response(200), endpoint, request(template="q"))
