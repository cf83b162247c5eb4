"""Against a real OpenSearch-compatible engine (osmem) loaded with the demo movies."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from app.search import (
    ConnectionReport,
    EndpointConfig,
    EngineHTTPError,
    SearchClient,
    SearchRequest,
    SearchResult,
    try_connection,
)
from app.vocabulary import Engine
from tests.engine_fixtures import MoviesEngine

MULTI_MATCH = """{
  "query": {
    "multi_match": {
      "query": "#$query##",
      "fields": ["title^##title_boost##", "director"],
      "operator": "and"
    }
  }
}"""
SPEC = "id:_id title:title director genre release_date"


def star_wars(**overrides: Any) -> SearchRequest:
    values: dict[str, Any] = {
        "template": MULTI_MATCH,
        "query_text": "star wars",
        "field_spec": SPEC,
    }
    return SearchRequest(**{**values, **overrides})


def run(endpoint: EndpointConfig, request: SearchRequest) -> SearchResult:
    async def go() -> SearchResult:
        async with httpx.AsyncClient() as http:
            return await SearchClient(http).search(endpoint, request)

    return asyncio.run(go())


def check(endpoint: EndpointConfig, request: SearchRequest) -> ConnectionReport:
    async def go() -> ConnectionReport:
        async with httpx.AsyncClient() as http:
            return await try_connection(http, endpoint, request)

    return asyncio.run(go())


def test_movies_are_indexed(movies_engine: MoviesEngine) -> None:
    assert movies_engine.count == 3201
    count = httpx.get(f"{movies_engine.index_url}/_count").json()["count"]
    assert count == 3201


def test_star_wars(movies_engine: MoviesEngine) -> None:
    endpoint = EndpointConfig(Engine.OPENSEARCH, movies_engine.index_url)
    result = run(endpoint, star_wars(rows=5))
    titles = [doc.fields["title"] for doc in result.docs]
    assert "Star Wars Ep. IV: A New Hope" in titles
    assert len(result.docs) == 5
    assert result.num_found >= 7
    new_hope = result.docs[titles.index("Star Wars Ep. IV: A New Hope")]
    assert new_hope.id == "913"
    assert new_hope.fields["director"] == "George Lucas"
    assert new_hope.fields["release_date"] == "1977-05-25"
    assert [doc.position for doc in result.docs] == [1, 2, 3, 4, 5]
    assert all(doc.explain is None for doc in result.docs)


def test_explain_when_asked(movies_engine: MoviesEngine) -> None:
    endpoint = EndpointConfig(Engine.ELASTICSEARCH, movies_engine.index_url)
    result = run(endpoint, star_wars(explain=True, rows=3))
    assert result.docs
    for doc in result.docs:
        assert isinstance(doc.explain, dict)
        assert doc.explain["value"] > 0


def test_unknown_index(movies_engine: MoviesEngine) -> None:
    endpoint = EndpointConfig(Engine.OPENSEARCH, f"{movies_engine.url}/nope")
    with pytest.raises(EngineHTTPError, match=r"HTTP 404 .*no such index \[nope\]") as info:
        run(endpoint, star_wars())
    assert info.value.status_code == 404


def test_bad_query_gives_engine_message(movies_engine: MoviesEngine) -> None:
    endpoint = EndpointConfig(Engine.OPENSEARCH, movies_engine.index_url)
    request = star_wars(template='{"query": {"bogus": {"title": "#$query##"}}}')
    with pytest.raises(EngineHTTPError, match=r"unknown query \[bogus\]"):
        run(endpoint, request)


def test_connection_ok(movies_engine: MoviesEngine) -> None:
    report = check(EndpointConfig(Engine.OPENSEARCH, movies_engine.index_url), star_wars())
    assert report.ok
    assert report.num_found is not None and report.num_found >= 7
    assert report.sample is not None and report.sample.position == 1
    assert "documents found" in report.message
    assert report.duration_ms > 0


def test_connection_ok_but_nothing_found(movies_engine: MoviesEngine) -> None:
    report = check(
        EndpointConfig(Engine.OPENSEARCH, movies_engine.index_url), star_wars(query_text="zzzqqq")
    )
    assert (report.ok, report.num_found, report.sample) == (True, 0, None)
    assert "found no documents" in report.message


def test_connection_failing(engine_down_url: str, movies_engine: MoviesEngine) -> None:
    down = check(EndpointConfig(Engine.OPENSEARCH, f"{engine_down_url}/movies"), star_wars())
    assert (down.ok, down.num_found, down.sample) == (False, None, None)
    assert "cannot connect" in down.message
    missing = check(EndpointConfig(Engine.OPENSEARCH, f"{movies_engine.url}/nope"), star_wars())
    assert not missing.ok
    assert "no such index [nope]" in missing.message
    bad_spec = check(
        EndpointConfig(Engine.OPENSEARCH, movies_engine.index_url), star_wars(field_spec="x:y")
    )
    assert not bad_spec.ok
    assert "unknown prefix 'x'" in bad_spec.message
