"""What each engine's adapter answers for the rest of the app, pinned engine by engine."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from app.search import EndpointConfig, SearchRequest, adapter_for, validate_template
from app.search.engines import ADAPTERS, build_http_request
from app.vocabulary import Engine, HttpMethod

HTTP_ENGINES = [e for e in Engine if e != Engine.STATIC]
URLS = {
    Engine.SOLR: "http://solr.test:8983/solr/films/select",
    Engine.ELASTICSEARCH: "http://es.test:9200/films",
    Engine.OPENSEARCH: "http://os.test:9200/films",
    Engine.VESPA: "http://vespa.test:8080",
    Engine.SEARCHAPI: "http://api.test/v2/find",
}


def _which(question: str) -> set[Engine]:
    return {engine for engine, adapter in ADAPTERS.items() if getattr(adapter, question)}


def test_only_the_static_adapter_answers_from_a_file() -> None:
    assert _which("answers_from_file") == {Engine.STATIC}


def test_only_the_searchapi_adapter_needs_mapper_code() -> None:
    assert _which("needs_mapper") == {Engine.SEARCHAPI}


def test_only_elasticsearch_and_opensearch_hold_ubi_click_logs() -> None:
    assert _which("holds_ubi_logs") == {Engine.ELASTICSEARCH, Engine.OPENSEARCH}


def test_each_engine_has_its_own_label() -> None:
    labels = {engine: adapter.label for engine, adapter in ADAPTERS.items()}
    assert labels == {
        Engine.SOLR: "Solr",
        Engine.ELASTICSEARCH: "Elasticsearch",
        Engine.OPENSEARCH: "OpenSearch",
        Engine.SEARCHAPI: "Search API",
        Engine.VESPA: "Vespa",
        Engine.STATIC: "Result file",
    }


def test_solr_is_searched_at_its_url_elasticsearch_at_the_index_search() -> None:
    assert adapter_for(Engine.SOLR).search_url(URLS[Engine.SOLR]) == URLS[Engine.SOLR]
    es = adapter_for(Engine.ELASTICSEARCH)
    assert es.search_url("http://es.test:9200/films") == "http://es.test:9200/films/_search"
    assert es.search_url("http://es.test:9200/films/") == "http://es.test:9200/films/_search"
    # The query stays a query, after the path.
    assert (
        adapter_for(Engine.OPENSEARCH).search_url("http://os.test/films?timeout=5s")
        == "http://os.test/films/_search?timeout=5s"
    )
    assert adapter_for(Engine.VESPA).search_url("http://vespa.test:8080") == (
        "http://vespa.test:8080/search/"
    )
    api = adapter_for(Engine.SEARCHAPI)
    assert api.search_url("http://api.test/v2/find") == "http://api.test/v2/find"


def test_endpoint_url_takes_off_what_the_adapter_adds() -> None:
    es = adapter_for(Engine.ELASTICSEARCH)
    assert es.endpoint_url("https://es.test:9243/tmdb/_search/") == "https://es.test:9243/tmdb"
    assert es.endpoint_url("http://es.test/tmdb/_search?timeout=5s") == (
        "http://es.test/tmdb?timeout=5s"
    )
    assert es.endpoint_url("http://es.test/tmdb") == "http://es.test/tmdb"
    assert adapter_for(Engine.VESPA).endpoint_url("http://vespa.test/search/") == (
        "http://vespa.test"
    )
    # Solr and a search API are called at their own URL, whatever its path says.
    for engine in (Engine.SOLR, Engine.SEARCHAPI):
        assert adapter_for(engine).endpoint_url("http://x.test/a/_search") == (
            "http://x.test/a/_search"
        )


@pytest.mark.parametrize("engine", HTTP_ENGINES)
def test_endpoint_url_undoes_search_url(engine: Engine) -> None:
    adapter = adapter_for(engine)
    assert adapter.endpoint_url(adapter.search_url(URLS[engine])) == URLS[engine]


@pytest.mark.parametrize("engine", HTTP_ENGINES)
def test_the_search_url_is_where_a_query_goes(engine: Engine) -> None:
    async def build() -> httpx.Request:
        async with httpx.AsyncClient() as http:
            endpoint = EndpointConfig(engine, URLS[engine], mapper_code="x")
            request = SearchRequest(
                template=adapter_for(engine).default_template(HttpMethod.GET),
                query_text="alien",
                field_spec="id title",
            )
            return build_http_request(http, endpoint, request)

    sent = asyncio.run(build())
    said = httpx.URL(adapter_for(engine).search_url(URLS[engine]))
    assert (sent.url.host, sent.url.path) == (said.host, said.path)
    assert sent.method == adapter_for(engine).query_method(HttpMethod.GET)


def test_elasticsearch_opensearch_and_vespa_always_post() -> None:
    for engine in (Engine.ELASTICSEARCH, Engine.OPENSEARCH, Engine.VESPA):
        for method in HttpMethod:
            assert adapter_for(engine).query_method(method) == HttpMethod.POST
    for engine in (Engine.SOLR, Engine.SEARCHAPI):
        for method in HttpMethod:
            assert adapter_for(engine).query_method(method) == method


def test_a_post_search_api_starts_from_a_json_template() -> None:
    api = adapter_for(Engine.SEARCHAPI)
    assert api.default_template(HttpMethod.GET) == "q=#$query##"
    assert json.loads(api.default_template(HttpMethod.POST)) == {"q": "#$query##"}
    solr = adapter_for(Engine.SOLR)
    assert solr.default_template(HttpMethod.POST) == solr.default_template(HttpMethod.GET)
    es = json.loads(adapter_for(Engine.ELASTICSEARCH).default_template(HttpMethod.GET))
    assert es["query"]["multi_match"]["query"] == "#$query##"
    assert "userQuery()" in adapter_for(Engine.VESPA).default_template(HttpMethod.POST)


@pytest.mark.parametrize("method", list(HttpMethod))
@pytest.mark.parametrize("engine", list(Engine))
def test_every_default_template_is_valid(engine: Engine, method: HttpMethod) -> None:
    validate_template(engine, adapter_for(engine).default_template(method))


def test_connection_tests_show_each_engines_id_field() -> None:
    specs = {engine: adapter.test_field_spec for engine, adapter in ADAPTERS.items()}
    assert specs[Engine.ELASTICSEARCH] == specs[Engine.OPENSEARCH] == "id:_id title:title"
    assert specs[Engine.SOLR] == specs[Engine.VESPA] == "id:id title:title"
    assert specs[Engine.SEARCHAPI] == "id:id title:title"
    assert specs[Engine.STATIC] == "id:id"
