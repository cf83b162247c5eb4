"""Against a real Solr; runs only when SOLR_URL (a request handler URL) is set.

For example, with docker compose up: ``SOLR_URL=http://localhost:8983/solr/movies/select``.
"""

from __future__ import annotations

import asyncio
import os

import httpx
import pytest

from app.search import EndpointConfig, EngineHTTPError, SearchClient, SearchRequest, SearchResult
from app.vocabulary import Engine, HttpMethod

SOLR_URL = os.environ.get("SOLR_URL", "")
pytestmark = [
    pytest.mark.solr,
    pytest.mark.skipif(not SOLR_URL, reason="SOLR_URL is not set (no live Solr to test against)"),
]


def run(request: SearchRequest, method: str = "GET") -> SearchResult:
    endpoint = EndpointConfig(Engine.SOLR, SOLR_URL, method=HttpMethod(method))

    async def go() -> SearchResult:
        async with httpx.AsyncClient() as http:
            return await SearchClient(http).search(endpoint, request)

    return asyncio.run(go())


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_live_solr_search_with_explain(method: str) -> None:
    request = SearchRequest(
        template="q=#$query##&defType=edismax&qf=title^##tb## director",
        query_text="star wars",
        field_spec="id:id title:title director",
        rows=5,
        explain=True,
    )
    result = run(request, method)
    assert result.num_found > 0
    assert result.docs and all(doc.id for doc in result.docs)
    assert isinstance(result.docs[0].explain, dict)


def test_live_solr_undefined_field() -> None:
    request = SearchRequest(
        template="q=#$query##&defType=edismax&qf=bogus_field_xyz&sort=bogus_field_xyz asc",
        query_text="star wars",
        field_spec="id:id title:title",
    )
    with pytest.raises(EngineHTTPError, match="bogus_field_xyz"):
        run(request)
