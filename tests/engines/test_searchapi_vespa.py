"""Search API endpoints (mappers in the sandbox) and Vespa, against local services."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.engines.fake_services import Service, running_service
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case
from tests.support.mappers import QUEPID_MAPPER as QUEPID_MAPPER

# Quepid's documented mapper, unchanged (assignments to undeclared globals).
HTML_MAPPER = """
function docsMapper(data) {
  const ids = [...data.matchAll(/data-id="([^"]+)"><a>([^<]*)</g)];
  return ids.map(m => ({id: m[1], title: m[2]}));
}
function numberOfResultsMapper(data) {
  return Number(/About (\\d+) results/.exec(data)[1]);
}
"""


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service() as running:
        yield running


def _endpoint(api: ApiUser, **body: Any) -> int:
    response = api.post("/api/v1/search-endpoints", json={"name": "e", **body})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _try(api: ApiUser, endpoint_id: int, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/v1/search-endpoints/{endpoint_id}/try", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_quepids_mapper_runs_unchanged_on_a_get_api(api: ApiUser, service: Service) -> None:
    endpoint_id = _endpoint(
        api,
        engine="searchapi",
        url=service.url + "/api",
        mapper_code=QUEPID_MAPPER,
        headers={"X-Api-Key": "k1"},
    )
    result = _try(
        api, endpoint_id, query_text="café & crème", template="q=#$query##&lang=fr", rows=2
    )
    assert result["error"] is None
    assert result["status"] == 200
    # Each rendered value is URL-encoded: the text arrives intact.
    assert service.last["query"] == {"q": ["café & crème"], "lang": ["fr"]}
    assert service.last["headers"]["X-Api-Key"] == "k1"
    # Ids become strings; rows limits the docs, numberOfResultsMapper gives the total.
    assert [d["id"] for d in result["docs"]] == ["101", "102"]
    assert result["docs"][0]["fields"] == {"title": "Café & crème", "publish_date_int": 2019}
    assert result["num_found"] == 3
    assert json.loads(result["raw"])[0]["publication_id"] == 101


def test_a_post_api_gets_the_template_as_json(api: ApiUser, service: Service) -> None:
    endpoint_id = _endpoint(
        api, engine="searchapi", url=service.url + "/api", method="POST", mapper_code=QUEPID_MAPPER
    )
    result = _try(api, endpoint_id, query_text='say "hi"', template='{"q": "#$query##", "n": 5}')
    assert result["error"] is None
    assert service.last["method"] == "POST"
    assert json.loads(service.last["body"]) == {"q": 'say "hi"', "n": 5}


def test_an_html_page_is_given_to_the_mapper_as_text(api: ApiUser, service: Service) -> None:
    endpoint_id = _endpoint(
        api, engine="searchapi", url=service.url + "/html", mapper_code=HTML_MAPPER
    )
    result = _try(api, endpoint_id, query_text="x")
    assert result["error"] is None, result
    assert [(d["id"], d["fields"]["title"]) for d in result["docs"]] == [
        ("h1", "First hit"),
        ("h2", "Second hit"),
    ]
    assert result["num_found"] == 7
    assert result["raw"].startswith("<html>")


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("docsMapper = function(d) { throw new Error('no luck'); }", "no luck"),
        ("docsMapper = function(d) { while (true) {} }", "time limit"),
        ("docsMapper = function(d) { return [{title: 'x'}]; }", "doc 1 from docsMapper has no id"),
        ("function other() {}", "defines no docsMapper"),
        ("docsMapper = function(d) { return 'nope'; }", "must return an array"),
        (
            "docsMapper = function(d) { const a = []; while (true) a.push('x'.repeat(1e6)); }",
            "mapper",
        ),
    ],
)
def test_a_failing_mapper_is_that_querys_error(
    api: ApiUser, service: Service, code: str, reason: str
) -> None:
    endpoint_id = _endpoint(api, engine="searchapi", url=service.url + "/api", mapper_code=code)
    result = _try(api, endpoint_id, query_text="x")
    assert result["docs"] == []
    assert reason in (result["error"] or "")


def test_a_searchapi_endpoint_needs_mapper_code(api: ApiUser, service: Service) -> None:
    response = api.post(
        "/api/v1/search-endpoints",
        json={"name": "e", "engine": "searchapi", "url": service.url + "/api"},
    )
    assert response.status_code == 422


@pytest.mark.runner
def test_a_case_on_a_search_api_runs_and_a_bad_mapper_errors_each_query(
    api: ApiUser, service: Service
) -> None:
    endpoint_id = _endpoint(
        api, engine="searchapi", url=service.url + "/api", mapper_code=QUEPID_MAPPER
    )
    case_id = int(
        make_case(api, endpoint_id, query_template="q=#$query##", field_spec="id:id title")["id"]
    )
    add_queries(api, case_id, ["one", "two"])
    run = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
    assert run["status"] == "finished", run
    assert [[d["id"] for d in q["docs"]] for q in run["queries"]] == [["101", "102", "103"]] * 2

    api.patch(
        f"/api/v1/search-endpoints/{endpoint_id}",
        json={"mapper_code": "docsMapper = function(d) { throw new Error('broken mapper'); }"},
    )
    failed = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
    assert [q["status"] for q in failed["queries"]] == ["error", "error"]
    assert "broken mapper" in failed["queries"][0]["error"]


def test_vespa_posts_the_template_to_search_and_reads_children(
    api: ApiUser, service: Service
) -> None:
    endpoint_id = _endpoint(api, engine="vespa", url=service.url)
    template = '{"yql": "select * from movie where userQuery()", "query": "#$query##"}'
    result = _try(
        api, endpoint_id, query_text="star wars", template=template, field_spec="id:movie_id title"
    )
    assert result["error"] is None, result
    assert service.last["path"] == "/search/"
    assert json.loads(service.last["body"]) == {
        "yql": "select * from movie where userQuery()",
        "query": "star wars",
        "hits": 10,
    }
    assert [(d["id"], d["fields"]["title"]) for d in result["docs"]] == [
        ("11", "Star Wars"),
        ("1891", "The Empire Strikes Back"),
    ]
    assert result["num_found"] == 42


def test_vespa_errors_are_reported(api: ApiUser, service: Service) -> None:
    endpoint_id = _endpoint(api, engine="vespa", url=service.url)
    result = _try(api, endpoint_id, query_text="broken", template='{"query": "#$query##"}')
    assert result["status"] == 400
    assert "Invalid query parameter: Could not parse query: Expected operator (code 4)" in (
        result["error"] or ""
    )
