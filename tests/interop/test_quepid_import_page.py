"""Importing a Quepid case from the cases list, and the case page's export link."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.pages import attr, login, one, soup
from tests.support.quepid import fixture


def _upload(client: TestClient, token: str, body: bytes) -> Any:
    return client.post(
        "/cases/import",
        data={"csrf_token": token},
        files={"file": ("case.json", body, "application/json")},
        follow_redirects=False,
    )


def _text(page: Any, selector: str) -> str:
    return " ".join(one(page, selector).get_text().split())


def test_import_from_the_cases_list_says_what_it_did(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    page = soup(client.get("/"))
    form = one(page, "#quepid-import-form")
    assert attr(form, "enctype") == "multipart/form-data"
    assert one(form, "button").get_text(strip=True) == "Import Quepid case"

    answer = _upload(client, token, json.dumps(fixture("tmdb_solr_case_v7.json")).encode())
    assert answer.status_code == 200
    (case,) = api.get("/api/v1/cases").json()
    shown = soup(answer)
    assert attr(one(shown, "#open-case"), "href").endswith(f"/cases/{case['id']}")
    assert _text(shown, "#import-counts") == "2 queries and 3 ratings imported."
    assert _text(shown, "#import-endpoint") == (
        "A search endpoint was created for it: Solr http://127.0.0.1:9/solr/tmdb/select "
        "(http://127.0.0.1:9/solr/tmdb/select)."
    )
    # Nothing listens on port 9: said, and the case is imported all the same.
    assert _text(shown, "#import-endpoint-problem") == (
        "Relevo cannot reach this endpoint's engine (cannot connect to "
        "http://127.0.0.1:9/solr/tmdb/select): the case cannot run until it can. Check the "
        "endpoint's URL and credentials, or choose another endpoint in the case's settings."
    )
    assert _text(shown, "#import-scorer") == "Scored with a new scorer Perfect in top 5."
    assert shown.select("#import-warnings") == []
    again = soup(_upload(client, token, json.dumps(fixture("tmdb_solr_case_v7.json")).encode()))
    assert _text(again, "#import-endpoint").startswith("It uses your existing search endpoint: ")
    assert _text(again, "#import-scorer") == "Scored with the existing scorer Perfect in top 5."
    case_page = soup(client.get(f"/cases/{case['id']}"))
    link = attr(one(case_page, "#ratings-io a.export-quepid-case"), "href")
    assert link.endswith(f"/api/v1/cases/{case['id']}/export?format=quepid")
    exported = client.get(link)  # the API reads the browser session for GET
    assert exported.status_code == 200 and exported.json()["case_name"] == "TMDB edismax"


def test_warnings_are_shown_before_opening_the_case(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    data = fixture("tmdb_solr_case_v7.json")
    data["scorer"] = {"name": "Our secret scorer"}
    answer = _upload(client, token, json.dumps(data).encode())
    assert answer.status_code == 200
    shown = soup(answer)
    (case,) = api.get("/api/v1/cases").json()
    assert attr(one(shown, "#imported-case"), "href").endswith(f"/cases/{case['id']}")
    warning = one(shown, "#import-warnings li").get_text()
    assert warning.startswith('The Quepid scorer "Our secret scorer" is not one of')


def test_a_bad_file_is_explained_on_the_cases_list(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    answer = _upload(client, token, b'{"case_name": "x", "queries": []}')
    assert answer.status_code == 422
    problem = one(soup(answer), "#quepid-import-problem").get_text()
    assert problem == 'This is not a Quepid case export: "scorer" is missing.'
    not_json = _upload(client, token, b"query,docid,rating\n")
    assert (
        one(soup(not_json), "#quepid-import-problem")
        .get_text()
        .startswith("The file is not valid JSON")
    )
    assert api.get("/api/v1/cases").json() == []
    # Without the form's token nothing is read.
    forged = _upload(client, "wrong", json.dumps(fixture("tmdb_solr_case_v7.json")).encode())
    assert forged.status_code == 403
    assert api.get("/api/v1/cases").json() == []
