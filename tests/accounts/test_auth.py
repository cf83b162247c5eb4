"""Health, API keys, sessions and the one error shape."""

from __future__ import annotations

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from tests.fixtures.users import PASSWORD, ApiUser
from tests.support.pages import login, one, soup


def test_health_needs_no_auth(client: TestClient) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_a_key_opens_the_api_and_a_wrong_key_gets_401(api: ApiUser, client: TestClient) -> None:
    assert api.get("/api/v1/me").json()["email"] == "alice@example.com"
    wrong = client.get("/api/v1/me", headers={"Authorization": "Bearer rlv_not-a-key"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert set(wrong.json()) == {"detail"}
    assert client.get("/api/v1/cases").status_code == 401
    basic = client.get("/api/v1/me", headers={"Authorization": "Basic YTpi"})
    assert basic.status_code == 401


def test_keys_are_shown_once_listed_by_prefix_and_revocable(api: ApiUser) -> None:
    created = api.post("/api/v1/api-keys", json={"name": "ci"})
    assert created.status_code == 201
    key = created.json()["key"]
    assert key.startswith("rlv_") and len(key) > 40
    listed = api.get("/api/v1/api-keys").json()
    assert {k["name"] for k in listed} == {"tests", "ci"}
    assert all("key" not in k for k in listed)
    assert created.json()["prefix"] == key[:12]
    new_headers = {"Authorization": f"Bearer {key}"}
    assert api.client.get("/api/v1/me", headers=new_headers).status_code == 200
    assert api.delete(f"/api/v1/api-keys/{created.json()['id']}").status_code == 204
    assert api.client.get("/api/v1/me", headers=new_headers).status_code == 401


def test_a_key_has_a_name_that_is_never_cut(api: ApiUser) -> None:
    unnamed = api.post("/api/v1/api-keys", json={"name": "  "})
    assert unnamed.status_code == 201
    assert unnamed.json()["name"] == f"Key {unnamed.json()['prefix']}"
    spaced = api.post("/api/v1/api-keys", json={"name": " nightly \n gate "})
    assert spaced.json()["name"] == "nightly gate"
    before = [k["id"] for k in api.get("/api/v1/api-keys").json()]
    too_long = api.post("/api/v1/api-keys", json={"name": "k" * 5000})
    assert too_long.status_code == 422
    assert [k["id"] for k in api.get("/api/v1/api-keys").json()] == before


def test_the_account_page_refuses_a_long_key_name_under_its_form(
    api: ApiUser, client: TestClient
) -> None:
    token = login(client)
    before = [k["id"] for k in api.get("/api/v1/api-keys").json()]
    page = client.post("/account/api-keys", data={"csrf_token": token, "name": "k" * 5000})
    assert page.status_code == 422
    html = soup(page)
    assert (
        one(html, "#key-error").get_text() == "A key's name has at most 200 characters, not 5000."
    )
    assert one(html, "form input[name=name]")["value"] == "k" * 5000
    assert html.select("header.topbar nav a")  # the page keeps its navigation
    assert [k["id"] for k in api.get("/api/v1/api-keys").json()] == before


def test_another_users_key_cannot_be_revoked(api: ApiUser, other_api: ApiUser) -> None:
    other_key_id = other_api.get("/api/v1/api-keys").json()[0]["id"]
    assert api.delete(f"/api/v1/api-keys/{other_key_id}").status_code == 404
    assert other_api.get("/api/v1/me").status_code == 200


def _login(client: TestClient, email: str, password: str) -> int:
    page = client.get("/login")
    token = BeautifulSoup(page.text, "html.parser").select_one("input[name=csrf_token]")
    assert token is not None
    response = client.post(
        "/login",
        data={
            "email": email,
            "password": password,
            "csrf_token": str(token["value"]),
            "next": "/account",
        },
        follow_redirects=False,
    )
    return int(response.status_code)


def test_browser_login_sets_a_signed_httponly_lax_cookie(api: ApiUser, client: TestClient) -> None:
    assert _login(client, "alice@example.com", PASSWORD) == 303
    assert client.get("/api/v1/me").json()["email"] == "alice@example.com"
    response = client.get("/account")
    assert response.status_code == 200


def test_session_cookie_flags(api: ApiUser, client: TestClient) -> None:
    response = client.get("/login")
    set_cookie = response.headers.get("set-cookie", "").lower()
    assert "relevo_session=" in set_cookie
    assert "httponly" in set_cookie
    assert "samesite=lax" in set_cookie


def test_wrong_password_is_refused(api: ApiUser, client: TestClient) -> None:
    assert _login(client, "alice@example.com", "not the password") == 400
    assert client.get("/api/v1/me").status_code == 401


def test_form_posts_without_csrf_are_refused(api: ApiUser, client: TestClient) -> None:
    client.get("/login")
    response = client.post("/login", data={"email": "alice@example.com", "password": PASSWORD})
    assert response.status_code == 403
    assert client.get("/api/v1/me").status_code == 401


def test_session_api_writes_need_the_csrf_header(api: ApiUser, client: TestClient) -> None:
    assert _login(client, "alice@example.com", PASSWORD) == 303
    refused = client.post("/api/v1/api-keys", json={"name": "x"})
    assert refused.status_code == 403


def test_pages_redirect_to_login(client: TestClient) -> None:
    response = client.get("/account", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].endswith("/login?next=%2Faccount")


def test_bad_bodies_get_422_naming_the_field(api: ApiUser) -> None:
    response = api.post(
        "/api/v1/search-endpoints",
        json={"name": "x", "engine": "lucene", "url": "http://localhost:9200/x"},
    )
    assert response.status_code == 422
    assert ["body", "engine"] in [e["loc"] for e in response.json()["detail"]]
    not_json = api.post(
        "/api/v1/search-endpoints",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert not_json.status_code == 422
