"""One adapter per engine, found by the registry: every engine has one, and says so."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app.search import EndpointConfig, RequestBuildError, parse_field_spec
from app.search.engines import ADAPTERS, adapter_for, build_ids_http_request
from app.vocabulary import Engine


def test_every_engine_has_its_own_adapter() -> None:
    assert set(ADAPTERS) == set(Engine)
    assert all(adapter.engine == engine for engine, adapter in ADAPTERS.items())
    assert adapter_for("opensearch") is ADAPTERS[Engine.OPENSEARCH]
    assert [e for e, a in ADAPTERS.items() if a.answers_from_file] == [Engine.STATIC]
    with pytest.raises(ValueError):
        adapter_for("lucene")


@pytest.mark.parametrize("engine", [Engine.VESPA, Engine.SEARCHAPI, Engine.STATIC])
def test_engines_without_lookup_by_id_say_so(engine: Engine) -> None:
    async def build() -> httpx.Request:
        async with httpx.AsyncClient() as http:
            endpoint = EndpointConfig(engine, "http://engine.example.com/x", mapper_code="1")
            return build_ids_http_request(http, endpoint, ["1"], parse_field_spec("id"))

    with pytest.raises(RequestBuildError, match=f"a {engine} endpoint cannot look docs up"):
        asyncio.run(build())


def test_solr_and_elastic_look_docs_up_by_id_their_own_way() -> None:
    async def build(engine: Engine, url: str) -> httpx.Request:
        async with httpx.AsyncClient() as http:
            endpoint = EndpointConfig(engine, url)
            return build_ids_http_request(http, endpoint, ["7", "8"], parse_field_spec("id title"))

    solr = asyncio.run(build(Engine.SOLR, "http://solr.example.com/solr/films/select"))
    assert solr.method == "GET" and solr.url.path == "/solr/films/select"
    assert dict(solr.url.params) == {
        "q": "{!terms f=id}7,8",
        "rows": "2",
        "fl": "id,title",
        "wt": "json",
    }
    elastic = asyncio.run(build(Engine.ELASTICSEARCH, "http://es.example.com/films"))
    assert (elastic.method, elastic.url.path) == ("POST", "/films/_search")
    assert elastic.headers["content-type"] == "application/json"
