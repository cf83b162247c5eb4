"""Administrators list, create, disable and reset accounts; nobody else may."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app import cli
from app.db import session_scope
from app.models import User
from tests.fixtures.users import PASSWORD, ApiUser, make_api_user
from tests.support.pages import login, one, soup


@pytest.fixture
def admin_api(client: TestClient, session_factory: sessionmaker[Session]) -> ApiUser:
    made = make_api_user(client, session_factory, "root@example.com")
    with session_scope(session_factory) as session:
        user = session.get(User, made.id)
        assert user is not None
        user.is_admin = True
        session.commit()
    return made


def test_non_admins_get_403(api: ApiUser, client: TestClient) -> None:
    for response in (
        api.get("/api/v1/admin/users"),
        api.post("/api/v1/admin/users", json={"email": "x@example.com", "password": PASSWORD}),
        api.patch(f"/api/v1/admin/users/{api.id}", json={"is_disabled": True}),
    ):
        assert response.status_code == 403
        assert response.json()["detail"] == "Only administrators may manage users."
    login(client)
    assert client.get("/admin/users").status_code == 403


def test_admin_lists_and_creates_users(admin_api: ApiUser, api: ApiUser) -> None:
    created = admin_api.post(
        "/api/v1/admin/users", json={"email": "New@Example.com", "password": PASSWORD}
    )
    assert created.status_code == 201
    assert created.json()["email"] == "new@example.com" and created.json()["is_admin"] is False
    emails = [u["email"] for u in admin_api.get("/api/v1/admin/users").json()]
    assert emails == ["root@example.com", "alice@example.com", "new@example.com"]
    again = admin_api.post(
        "/api/v1/admin/users", json={"email": "new@example.com", "password": PASSWORD}
    )
    assert again.status_code == 409
    short = admin_api.post("/api/v1/admin/users", json={"email": "s@example.com", "password": "x"})
    assert short.status_code == 422
    assert admin_api.patch("/api/v1/admin/users/99999999", json={}).status_code == 404


def test_disabling_stops_keys_and_sessions_at_once(
    admin_api: ApiUser, api: ApiUser, client: TestClient
) -> None:
    login(client)  # alice's browser session, on the shared client
    assert client.get("/api/v1/me").status_code == 200
    assert api.get("/api/v1/me").status_code == 200
    response = admin_api.patch(f"/api/v1/admin/users/{api.id}", json={"is_disabled": True})
    assert response.json()["is_disabled"] is True
    assert api.get("/api/v1/me").status_code == 401
    assert client.get("/api/v1/me").status_code == 401
    assert client.get("/", follow_redirects=False).status_code == 303
    token = one(soup(client.get("/login")), "input[name=csrf_token]")["value"]
    refused = client.post(
        "/login",
        data={"email": "alice@example.com", "password": PASSWORD, "csrf_token": str(token)},
        follow_redirects=False,
    )
    assert refused.status_code == 400
    admin_api.patch(f"/api/v1/admin/users/{api.id}", json={"is_disabled": False})
    assert api.get("/api/v1/me").status_code == 200
    own = admin_api.patch(f"/api/v1/admin/users/{admin_api.id}", json={"is_disabled": True})
    assert own.status_code == 409


def test_reset_password_ends_sessions_and_sets_the_new_one(
    admin_api: ApiUser, api: ApiUser, client: TestClient
) -> None:
    login(client)
    new = "a brand new passphrase"
    response = admin_api.patch(f"/api/v1/admin/users/{api.id}", json={"password": new})
    assert response.status_code == 200
    assert client.get("/api/v1/me").status_code == 401
    page = client.get("/login")
    token = one(soup(page), "input[name=csrf_token]")["value"]
    signed_in = client.post(
        "/login",
        data={"email": "alice@example.com", "password": new, "csrf_token": str(token)},
        follow_redirects=False,
    )
    assert signed_in.status_code == 303


def test_admin_page_disables_a_user(admin_api: ApiUser, api: ApiUser, client: TestClient) -> None:
    token = login(client, "root@example.com")
    page = soup(client.get("/admin/users"))
    assert [td.get_text() for td in page.select(".account-email")] == [
        "root@example.com (admin)",
        "alice@example.com",
    ]
    response = client.post(
        f"/admin/users/{api.id}", data={"action": "disable", "csrf_token": token}
    )
    assert response.status_code == 200
    row = one(soup(response), f"tr[data-user-id='{api.id}']")
    assert one(row, ".account-state").get_text() == "disabled"
    assert api.get("/api/v1/me").status_code == 401
    bad = client.post(
        f"/admin/users/{api.id}", data={"action": "reset", "password": "short", "csrf_token": token}
    )
    assert bad.status_code == 422
    assert "at least 12" in one(soup(bad), "#admin-error").get_text()


@pytest.mark.runner  # the command opens its own connection: the data must be committed
def test_cli_lists_disables_and_resets(
    api: ApiUser,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    assert cli.main(["users", "disable", "alice@example.com"]) == 0
    assert api.get("/api/v1/me").status_code == 401
    assert cli.main(["users", "list"]) == 0
    out = capsys.readouterr().out
    assert f"{api.id}\talice@example.com\tdisabled" in out
    assert cli.main(["users", "enable", "alice@example.com"]) == 0
    assert api.get("/api/v1/me").status_code == 200
    monkeypatch.setattr("sys.stdin", io.StringIO("another good password\n"))
    assert cli.main(["users", "reset-password", "alice@example.com", "--password-stdin"]) == 0
    assert cli.main(["users", "disable", "nobody@example.com"]) == 2
    assert "No user with the email" in capsys.readouterr().err
