"""API key scopes (read, run, write, judge): set and shown in the API and on the account
page, enforced on the REST API, and every right kept by keys made before scopes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from fastapi.testclient import TestClient

from app.accounts.scopes import required_scope
from app.db import alembic_config
from tests.fixtures.users import ApiUser
from tests.support.pages import login, one, soup


def test_a_new_key_has_every_scope_unless_told_and_a_key_keeps_to_its_own(
    api: ApiUser, client: TestClient
) -> None:
    every = api.post("/api/v1/api-keys", json={"name": "ci", "can_manage_keys": True}).json()
    assert every["scopes"] == ["read", "run", "write", "judge"]
    reader = api.post("/api/v1/api-keys", json={"name": "agent", "scopes": ["read"]})
    assert reader.status_code == 201 and reader.json()["scopes"] == ["read"]
    bad = api.post("/api/v1/api-keys", json={"name": "x", "scopes": ["admin"]})
    assert bad.status_code == 422
    empty = api.post("/api/v1/api-keys", json={"name": "x", "scopes": []})
    assert empty.status_code == 422

    key = {"Authorization": f"Bearer {reader.json()['key']}"}
    assert client.get("/api/v1/cases", headers=key).status_code == 200
    refused = client.post(
        "/api/v1/search-endpoints",
        headers=key,
        json={"name": "e", "engine": "elasticsearch", "url": "http://127.0.0.1:9/x"},
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This API key lacks the 'write' scope (its scopes: read)."
    # A key never mints or widens a key beyond its own rights.
    runner = api.post("/api/v1/api-keys", json={"name": "r", "scopes": ["read", "write"]}).json()
    manager = api.post(
        "/api/v1/api-keys",
        json={"name": "m", "scopes": ["read", "write"], "can_manage_keys": True},
    ).json()
    as_manager = {"Authorization": f"Bearer {manager['key']}"}
    wider = client.post(
        "/api/v1/api-keys", headers=as_manager, json={"name": "w", "scopes": ["judge"]}
    )
    assert wider.status_code == 403 and "'judge' scope" in wider.json()["detail"]
    narrowed = client.patch(
        f"/api/v1/api-keys/{runner['id']}", headers=as_manager, json={"scopes": ["read"]}
    )
    assert narrowed.status_code == 200 and narrowed.json()["scopes"] == ["read"]
    listed = {k["name"]: k["scopes"] for k in api.get("/api/v1/api-keys").json()}
    assert listed["r"] == ["read"] and listed["agent"] == ["read"]


def test_the_account_page_sets_and_shows_scopes(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    made = client.post(
        "/account/api-keys",
        data={
            "csrf_token": token,
            "name": "desktop",
            "scopes": ["read", "run"],
            "scopes_shown": "1",
        },
    )
    assert made.status_code == 200
    keys = {k["name"]: k for k in api.get("/api/v1/api-keys").json()}
    assert keys["desktop"]["scopes"] == ["read", "run"]
    form = one(soup(made), f"#key-scopes-{keys['desktop']['id']}")
    ticked = [i["value"] for i in form.select("input[name=scopes]") if i.has_attr("checked")]
    assert ticked == ["read", "run"]
    none = client.post(
        "/account/api-keys",
        data={"csrf_token": token, "name": "nothing", "scopes_shown": "1"},
    )
    assert none.status_code == 422
    assert "at least one scope" in one(soup(none), "#key-error").get_text()
    changed = client.post(
        f"/account/api-keys/{keys['desktop']['id']}/scopes",
        data={"csrf_token": token, "scopes": ["read", "judge"]},
        follow_redirects=False,
    )
    assert changed.status_code == 303
    keys = {k["name"]: k for k in api.get("/api/v1/api-keys").json()}
    assert keys["desktop"]["scopes"] == ["read", "judge"]


def test_which_scope_a_request_needs() -> None:
    assert required_scope("GET", "/api/v1/cases/3") == "read"
    assert required_scope("POST", "/api/v1/cases/3/runs") == "run"
    assert required_scope("POST", "/api/v1/cases/3/runs/9/cancel") == "run"
    assert required_scope("POST", "/api/v1/cases/3/sweeps") == "run"
    assert required_scope("POST", "/api/v1/cases/3/sweeps/2/apply") == "write"
    assert required_scope("POST", "/api/v1/search-endpoints/4/try") == "run"
    assert required_scope("POST", "/api/v1/books/1/judge-runs") == "judge"
    assert required_scope("POST", "/api/v1/judges/1/test") == "judge"
    assert required_scope("POST", "/api/v1/books/1/judge-runs/2/cancel") == "write"
    assert required_scope("PUT", "/api/v1/cases/3/queries/1/ratings") == "write"
    assert required_scope("DELETE", "/api/v1/cases/3") == "write"
    assert required_scope("POST", "/api/v1/cases/3/annotations") == "write"


def test_keys_made_before_scopes_keep_every_right(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    config = alembic_config(url)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0024_clicks")
        conn.execute(
            sa.text(
                "INSERT INTO users (email, password_hash, is_admin, is_disabled, created_at) "
                "VALUES ('old@example.com', 'x', 0, 0, '2026-01-01')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO api_keys (user_id, name, prefix, key_hash, created_at, "
                "can_manage_keys) VALUES (1, 'old', 'rlv_', 'h', '2026-01-01', 0)"
            )
        )
        command.upgrade(config, "0026_mcp")
        scopes = conn.execute(sa.text("SELECT scopes FROM api_keys")).scalar_one()
    engine.dispose()
    assert scopes == "read run write judge"
