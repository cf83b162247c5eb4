"""The endpoint page for the new engine kinds: mapper code, "Try it", result-file upload."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.engines.fake_services import Service, running_service
from tests.fixtures.users import ApiUser
from tests.support.pages import login, one, soup

MAPPER = """
function docsMapper(data) {
  return data.map(p => ({id: p.publication_id, title: p.title, year: p.publish_date_int}));
}
function numberOfResultsMapper(data) { return data.length * 10; }
"""


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service() as running:
        yield running


def _form(**fields: str) -> dict[str, str]:
    base = {
        "name": "Publications",
        "engine": "searchapi",
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


def test_a_search_api_endpoint_is_made_in_the_form_and_tried(
    api: ApiUser, client: TestClient, service: Service
) -> None:
    token = login(client)
    missing = client.post("/endpoints", data=_form(csrf_token=token, url=service.url + "/api"))
    assert missing.status_code == 422
    assert "mapper_code defining docsMapper" in missing.text
    assert one(soup(missing), "textarea[name=mapper_code]").get_text() == ""

    created = client.post(
        "/endpoints",
        data=_form(csrf_token=token, url=service.url + "/api", mapper_code=MAPPER),
        follow_redirects=False,
    )
    assert created.status_code == 303, created.text
    stored = api.get("/api/v1/search-endpoints").json()[0]
    assert stored["engine"] == "searchapi"
    assert stored["mapper_code"].strip() == MAPPER.strip()
    page = soup(client.get(created.headers["location"]))
    assert "docsMapper" in one(page, "textarea[name=mapper_code]").get_text()
    assert one(page, "#try-form")

    # Without htmx the whole page comes back with the try panel filled in.
    tried = client.post(
        f"/endpoints/{stored['id']}/try",
        data={"csrf_token": token, "query_text": "café", "template": "q=#$query##"},
    )
    assert tried.status_code == 200
    panel = one(soup(tried), "#try-result")
    assert panel["data-ok"] == "true"
    assert one(panel, "#try-status").get_text() == "200"
    assert one(panel, "#try-num-found").get_text() == "30"  # the mapper's own count
    assert [td.get_text() for td in panel.select(".doc-id")] == ["101", "102", "103"]
    assert (
        "Café &amp; crème" in str(panel) and "publication_id" in one(panel, "#try-raw").get_text()
    )
    assert service.last["query"] == {"q": ["café"]}
    assert one(soup(tried), "input[name=query_text]")["value"] == "café"

    # With htmx only the panel comes back.
    partial = client.post(
        f"/endpoints/{stored['id']}/try",
        data={"csrf_token": token, "query_text": "x"},
        headers={"HX-Request": "true"},
    )
    assert partial.status_code == 200 and "<html" not in partial.text
    assert one(soup(partial), "#try-doc-count").get_text() == "3"


def test_a_mapper_that_throws_is_shown_as_the_error(
    api: ApiUser, client: TestClient, service: Service
) -> None:
    token = login(client)
    broken = "function docsMapper(data) { throw new Error('no docs here'); }"
    created = api.post(
        "/api/v1/search-endpoints",
        json={
            "name": "b",
            "engine": "searchapi",
            "url": service.url + "/api",
            "mapper_code": broken,
        },
    ).json()
    page = soup(client.post(f"/endpoints/{created['id']}/try", data={"csrf_token": token}))
    panel = one(page, "#try-result")
    assert panel["data-ok"] == "false"
    assert "no docs here" in one(panel, "#try-error").get_text()
    assert "publication_id" in one(panel, "#try-raw").get_text()  # what the service answered


def _upload(client: TestClient, endpoint_id: int, token: str, fmt: str, body: bytes) -> Any:
    """Upload a result file; return the redirect's target path (with its fragment)."""
    sent = client.post(
        f"/endpoints/{endpoint_id}/results",
        data={"csrf_token": token, "format": fmt},
        files={"file": ("run.txt", body, "text/plain")},
        follow_redirects=False,
    )
    assert sent.status_code == 303, sent.text  # Post/Redirect/Get: a refresh re-posts nothing
    location = str(sent.headers["location"])
    assert location.startswith(f"http://testserver/endpoints/{endpoint_id}?upload=")
    return location.removeprefix("http://testserver")


def test_a_result_file_is_uploaded_on_the_page_and_tried(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    created = api.post("/api/v1/search-endpoints", json={"name": "run", "engine": "static"}).json()
    page = soup(client.get(f"/endpoints/{created['id']}"))
    assert "No results yet." in one(page, "#result-file").get_text()
    bad = _upload(client, created["id"], token, "trec", b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 oops\n")
    # The page lands on the outcome, which sits under the upload form.
    assert bad.endswith("#results-problem")
    shown = soup(client.get(bad))
    problem = one(shown, "#result-file #results-problem").get_text()
    assert "nothing was stored" in problem and "line 2" in problem
    # Read again (a refresh): the same outcome, nothing re-posted.
    assert one(soup(client.get(bad)), "#results-problem").get_text() == problem
    run = b"q1 Q0 d9 1 1.0 t\nq2 Q0 d3 1 4.0 t\nq2 Q0 d4 2 9.0 t\n"
    xml = soup(client.get(_upload(client, created["id"], token, "xml", run)))
    assert one(xml, "#results-problem").get_text().strip() == (
        "'xml' is not a result format: choose TREC run or CSV."
    )
    assert "No results yet." in one(xml, "#result-file").get_text()
    good = _upload(client, created["id"], token, "trec", run)
    assert good.endswith("#results-uploaded")
    assert one(soup(client.get(good)), "#result-file #results-uploaded").get_text().strip() == (
        "Stored 3 result lines for 2 queries."
    )
    again = _upload(client, created["id"], token, "trec", run)
    assert one(soup(client.get(again)), "#results-uploaded").get_text().strip() == (
        "Stored 3 result lines for 2 queries, replacing the previous file."
    )
    # A token that was never given out (or has expired) shows no outcome.
    unknown = soup(client.get(f"/endpoints/{created['id']}?upload=AAAAAAAAAAAAAAAAAAAAAAAA"))
    assert unknown.select("#results-uploaded, #results-problem") == []
    tried = soup(
        client.post(
            f"/endpoints/{created['id']}/try", data={"csrf_token": token, "query_text": "q2"}
        )
    )
    # Ranked by score, as trec_eval ranks a run: d4 (9.0) before d3 (4.0).
    assert [td.get_text() for td in tried.select("#try-result .doc-id")] == ["d4", "d3"]
    assert "Results are stored." in one(tried, "#result-file").get_text()
