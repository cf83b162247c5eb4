"""Fetching docs by id: the request builders, compared whole, and the client's requests."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from app.outbound.policy import OutboundPolicy
from app.search import (
    MAX_LOOKUP_IDS,
    EndpointConfig,
    RequestBuildError,
    SearchClient,
    SearchResult,
    build_es_ids_body,
    build_ids_http_request,
    build_solr_ids_params,
    parse_field_spec,
)
from app.vocabulary import Engine

SPEC = parse_field_spec("id:_id title:title overview thumb:poster_path")


def test_es_body_uses_an_ids_query_on_the_hit_id() -> None:
    assert build_es_ids_body(["11", "1891"], SPEC) == {
        "query": {"ids": {"values": ["11", "1891"]}},
        "size": 2,
        "_source": ["title", "overview", "poster_path"],
    }


def test_es_body_uses_a_terms_query_on_a_source_id_field() -> None:
    spec = parse_field_spec("id:imdb_id title:title")
    assert build_es_ids_body(["tt0076759"], spec) == {
        "query": {"terms": {"imdb_id": ["tt0076759"]}},
        "size": 1,
        "_source": ["imdb_id", "title"],
    }


def test_es_body_asks_for_no_source_when_the_spec_names_only_metadata() -> None:
    assert build_es_ids_body(["7"], parse_field_spec("id:_id"))["_source"] is False


def test_solr_params_use_the_terms_parser_in_solr_9_shape() -> None:
    spec = parse_field_spec("id:id title:title_t overview_t")
    assert build_solr_ids_params(["11", "1891", "1892"], spec) == {
        "q": "{!terms f=id}11,1891,1892",
        "rows": "3",
        "fl": "id,title_t,overview_t",
        "wt": "json",
    }


def test_solr_params_pick_a_separator_no_id_contains() -> None:
    spec = parse_field_spec("id:id title:title")
    params = build_solr_ids_params(["a,b", "c"], spec)
    assert params["q"] == "{!terms f=id separator='|'}a,b|c"


@pytest.mark.parametrize("ids", [[], [str(n) for n in range(MAX_LOOKUP_IDS + 1)]])
def test_builders_refuse_no_ids_and_too_many(ids: list[str]) -> None:
    with pytest.raises(RequestBuildError):
        build_es_ids_body(ids, SPEC)
    with pytest.raises(RequestBuildError):
        build_solr_ids_params(ids, SPEC)


def _built(endpoint: EndpointConfig, ids: list[str], spec_text: str) -> httpx.Request:
    async def go() -> httpx.Request:
        async with httpx.AsyncClient() as http:
            return build_ids_http_request(http, endpoint, ids, parse_field_spec(spec_text))

    return asyncio.run(go())


def test_es_request_posts_to_the_index_search_url() -> None:
    endpoint = EndpointConfig(engine=Engine.OPENSEARCH, url="http://engine.test/movies")
    built = _built(endpoint, ["11"], "id:_id title:title")
    assert (built.method, str(built.url)) == ("POST", "http://engine.test/movies/_search")
    assert json.loads(built.content)["query"] == {"ids": {"values": ["11"]}}


def test_solr_get_request_carries_the_params() -> None:
    endpoint = EndpointConfig(engine=Engine.SOLR, url="http://solr.test/solr/movies/select")
    built = _built(endpoint, ["11", "12"], "id:id title:title")
    assert built.method == "GET"
    assert dict(built.url.params) == {
        "q": "{!terms f=id}11,12",
        "rows": "2",
        "fl": "id,title",
        "wt": "json",
    }


def test_fetch_ids_parses_a_solr_answer() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = {"response": {"numFound": 1, "docs": [{"id": "11", "title": "Star Wars"}]}}
        return httpx.Response(200, json=body)

    endpoint = EndpointConfig(engine=Engine.SOLR, url="http://solr.test/solr/movies/select")
    policy = OutboundPolicy(block_private=False)
    seen: list[httpx.Request] = []

    async def go() -> SearchResult:
        def recording(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return answer(request)

        async with httpx.AsyncClient(transport=httpx.MockTransport(recording)) as http:
            return await SearchClient(http, policy=policy).fetch_ids(
                endpoint, ["11", "12"], "id:id title:title"
            )

    result = asyncio.run(go())
    assert seen[0].url.params["q"] == "{!terms f=id}11,12"
    assert [(d.id, d.fields) for d in result.docs] == [("11", {"title": "Star Wars"})]
