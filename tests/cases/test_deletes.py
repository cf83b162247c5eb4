"""Deleting cases, queries, scorers and endpoints from the pages, after a confirmation."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, login, make_endpoint, movies_case, one, soup

JS = "setScore(50);\n"


def _confirm_and_delete(client: TestClient, page_url: str, button: str, token: str) -> str:
    """Follow a delete button without JavaScript: open its confirmation, then confirm."""
    page = soup(client.get(page_url))
    form = one(page, f"#{button}")
    assert form["method"] == "get"
    assert str(one(form, "button")["hx-confirm"]).startswith("Delete ")
    confirm = client.get(str(form["action"]))
    assert confirm.status_code == 200
    confirm_form = one(soup(confirm), "#confirm-delete-form")
    assert one(confirm_form, "input[name=csrf_token]")["value"] == token
    done = client.post(
        str(confirm_form["action"]), data={"csrf_token": token}, follow_redirects=False
    )
    assert done.status_code == 303, done.text
    return str(done.headers["location"])


def test_a_case_is_deleted_only_after_its_confirmation(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    token = login(client)
    confirm = soup(client.get(f"/cases/{case_id}/delete"))
    assert one(confirm, ".doomed-name").get_text() == "Movies"
    assert api.get(f"/api/v1/cases/{case_id}").status_code == 200  # asking deletes nothing
    target = _confirm_and_delete(client, f"/cases/{case_id}", "delete-case", token)
    assert target.endswith("/")
    assert api.get(f"/api/v1/cases/{case_id}").status_code == 404


def test_a_query_is_deleted_from_its_page(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "alien"])
    token = login(client)
    page_url = f"/cases/{case_id}/queries/{ids['alien']}"
    target = _confirm_and_delete(client, page_url, "delete-query", token)
    assert target.endswith(f"/cases/{case_id}")
    left = [q["text"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()]
    assert left == ["star wars"]


def test_scorers_and_endpoints_are_deleted_unless_a_case_uses_them(
    api: ApiUser, client: TestClient
) -> None:
    body = {"name": "Mine", "kind": "javascript", "code": JS, "scale": [0, 1]}
    scorer = api.post("/api/v1/scorers", json=body).json()
    spare = make_endpoint(api, "http://127.0.0.1:9/spare")
    token = login(client)
    target = _confirm_and_delete(client, f"/scorers/{scorer['id']}", "delete-scorer", token)
    assert target.endswith("/scorers")
    assert "Mine" not in [s["name"] for s in api.get("/api/v1/scorers").json()]
    target = _confirm_and_delete(client, f"/endpoints/{spare['id']}", "delete-endpoint", token)
    assert target.endswith("/endpoints")
    assert api.get(f"/api/v1/search-endpoints/{spare['id']}").status_code == 404
    case_id = movies_case(api)
    used = api.get(f"/api/v1/cases/{case_id}").json()["search_endpoint_id"]
    refused = client.post(f"/endpoints/{used}/delete", data={"csrf_token": token})
    assert refused.status_code == 409
    assert "used by cases" in one(soup(refused), ".error-message").get_text()
    assert api.get(f"/api/v1/search-endpoints/{used}").status_code == 200


def test_htmx_delete_redirects_with_hx_redirect_and_needs_the_csrf_token(
    api: ApiUser, client: TestClient
) -> None:
    case_id = movies_case(api)
    token = login(client)
    refused = client.post(f"/cases/{case_id}/delete", headers={"HX-Request": "true"})
    assert refused.status_code == 403
    assert api.get(f"/api/v1/cases/{case_id}").status_code == 200
    done = client.post(
        f"/cases/{case_id}/delete", headers={"HX-Request": "true", "X-CSRF-Token": token}
    )
    assert done.status_code == 200
    assert done.headers["HX-Redirect"].endswith("/")
    assert api.get(f"/api/v1/cases/{case_id}").status_code == 404


def test_built_in_scorers_cannot_be_deleted(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    preset = api.get("/api/v1/scorers").json()[0]
    assert preset["builtin"]
    assert soup(client.get(f"/scorers/{preset['id']}")).select_one("#delete-scorer") is None
    refused = client.post(f"/scorers/{preset['id']}/delete", data={"csrf_token": token})
    assert refused.status_code == 409
    assert "read-only" in one(soup(refused), ".error-message").get_text()
    assert api.get(f"/api/v1/scorers/{preset['id']}").status_code == 200
