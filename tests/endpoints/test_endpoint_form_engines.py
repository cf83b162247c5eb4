"""The endpoint form by engine: the check after a save sends what a run would, the fields
name their engines, and a new case starts with a template fitting its endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.engines.fake_services import Service, running_service
from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint
from tests.support.pages import login, one, soup

MAPPER = "function docsMapper(data) { return data.map(p => ({id: p.publication_id})); }"
OPENSEARCH_DEFAULT = '{"query": {"multi_match": {"query": "#$query##", "fields": ["title"]}}}'


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service() as running:
        yield running


def _form(token: str, **fields: str) -> dict[str, str]:
    base = {
        "csrf_token": token,
        "name": "e",
        "engine": "opensearch",
        "url": "",
        "method": "GET",
        "headers": "",
        "basic_auth": "",
        "timeout_s": "5",
        "requests_per_minute": "0",
        "max_concurrency": "4",
        "mapper_code": "",
    }
    return base | fields


def test_saving_a_result_file_endpoint_calls_nothing_and_says_whether_results_are_stored(
    api: ApiUser, client: TestClient
) -> None:
    token = login(client)
    saved = client.post(
        "/endpoints", data=_form(token, name="run", engine="static"), follow_redirects=False
    )
    assert saved.status_code == 303
    page = soup(client.get(saved.headers["location"]))
    assert one(page, "#saved").get_text() == "Saved."
    assert page.select_one("#save-warning") is None
    assert one(page, "#save-note").get_text() == (
        "No results stored yet: upload a result file below."
    )
    # Nothing on the page calls a result file over HTTP or asks for a template it ignores.
    assert page.select("#test-connection") == []
    assert one(page, "#try-form").select("textarea[name=template]") == []
    assert one(page, "#result-file")


def test_saving_a_post_search_api_sends_a_json_test_query(
    api: ApiUser, client: TestClient, service: Service
) -> None:
    token = login(client)
    saved = client.post(
        "/endpoints",
        data=_form(
            token, engine="searchapi", url=service.url + "/api", method="POST", mapper_code=MAPPER
        ),
        follow_redirects=False,
    )
    page = soup(client.get(saved.headers["location"]))
    assert page.select_one("#save-warning") is None, one(page, "#save-warning").get_text()
    assert service.last["method"] == "POST"
    assert json.loads(service.last["body"]) == {"q": "test"}


def test_saving_sends_the_template_of_the_users_latest_case_on_the_endpoint(
    api: ApiUser, client: TestClient, service: Service
) -> None:
    endpoint = make_endpoint(
        api, service.url + "/api", engine="searchapi", method="GET", mapper_code=MAPPER
    )
    make_case(api, endpoint["id"], query_template="term=#$query##&size=##size##", knobs={"size": 3})
    token = login(client)
    saved = client.post(
        f"/endpoints/{endpoint['id']}",
        data=_form(
            token, name="renamed", engine="searchapi", url=service.url + "/api", mapper_code=MAPPER
        ),
        follow_redirects=False,
    )
    page = soup(client.get(saved.headers["location"]))
    assert page.select_one("#save-warning") is None
    assert service.last["query"] == {"term": ["test"], "size": ["3"]}


def test_each_endpoint_field_names_the_engines_that_use_it(
    api: ApiUser, client: TestClient
) -> None:
    login(client)
    form = one(soup(client.get("/endpoints/new")), "#endpoint-form")
    assert one(form, "select[name=engine]")["data-engine-fields"] == "endpoint-form"

    def engines(selector: str) -> str:
        found = one(form, selector).find_parent(attrs={"data-engines": True})
        assert found is not None
        return str(found["data-engines"])

    assert engines("textarea[name=mapper_code]") == "searchapi"
    assert engines("select[name=method]") == "solr searchapi"
    assert "static" not in engines("input[name=url]").split()
    assert "static" not in engines("textarea[name=headers]").split()
    assert one(form, "input[name=name]").find_parent(attrs={"data-engines": True}) is None
    # Without JavaScript every field is there to fill in.
    assert not form.select("[hidden]")


def test_a_new_case_on_a_result_file_endpoint_gets_no_opensearch_template(
    api: ApiUser, client: TestClient
) -> None:
    make_endpoint(api, "http://127.0.0.1:9/movies", name="a movies")
    static = make_endpoint(api, "", name="b run", engine="static")
    post_api = make_endpoint(
        api, "http://127.0.0.1:9/api", name="c api", engine="searchapi", method="POST",
        mapper_code=MAPPER,
    )  # fmt: skip
    token = login(client)
    form = one(soup(client.get("/")), "#new-case-form")
    # The list starts on the first endpoint, so the template starts as its default.
    assert one(form, "textarea[name=query_template]").get_text() == OPENSEARCH_DEFAULT
    options = {o.get_text(): o["data-template"] for o in form.select("option[data-template]")}
    assert options == {
        "a movies (opensearch)": OPENSEARCH_DEFAULT,
        "b run (static)": "#$query##",
        "c api (searchapi)": '{"q": "#$query##"}',
    }
    # Without the script that swaps it, the first endpoint's default comes with the pick.
    for endpoint, expected in ((static, "#$query##"), (post_api, '{"q": "#$query##"}')):
        created = client.post(
            "/cases",
            data={
                "csrf_token": token,
                "name": f"on {endpoint['name']}",
                "search_endpoint_id": endpoint["id"],
                "query_template": OPENSEARCH_DEFAULT.replace("\n", "\r\n"),
                "field_spec": "id:id",
                "rows": "10",
            },
            follow_redirects=False,
        )
        assert created.status_code == 303, created.text
        case = next(
            c for c in api.get("/api/v1/cases").json() if c["name"] == f"on {endpoint['name']}"
        )
        assert case["query_template"] == expected
