"""Sessions, login throttling, key rights, body limits and security headers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as users
from app.accounts import sessions
from app.accounts.throttle import LoginThrottle
from app.db import session_scope
from app.errors import Invalid
from app.models import ApiKey, User, UserSession
from tests.fixtures.users import PASSWORD, ApiUser


def _token(client: TestClient, path: str = "/login") -> str:
    found = BeautifulSoup(client.get(path).text, "html.parser").select_one("input[name=csrf_token]")
    assert found is not None
    return str(found["value"])


def _login(client: TestClient, email: str = "alice@example.com", password: str = PASSWORD) -> int:
    data = {"email": email, "password": password, "csrf_token": _token(client), "next": "/"}
    return int(client.post("/login", data=data, follow_redirects=False).status_code)


def test_a_cookie_replayed_after_logout_is_refused(api: ApiUser, client: TestClient) -> None:
    assert _login(client) == 303
    saved = dict(client.cookies)
    assert client.get("/api/v1/me").status_code == 200
    csrf = _token(client, "/account")
    assert (
        client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False).status_code == 303
    )
    client.cookies.clear()
    client.cookies.update(saved)
    assert client.get("/api/v1/me").status_code == 401
    assert client.get("/account", follow_redirects=False).status_code == 303


def test_idle_sessions_expire(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    assert _login(client) == 303
    with session_scope(session_factory) as session:
        old = datetime.now(UTC) - timedelta(days=2)
        session.execute(update(UserSession).values(last_seen_at=old))
        session.commit()
    assert client.get("/api/v1/me").status_code == 401


def test_password_change_and_admin_revoke_end_other_sessions(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    with session_scope(session_factory) as session:
        user = session.get(User, api.id)
        assert user is not None
        other = sessions.start(session=session, user=user)
        third = sessions.start(session=session, user=user)
        users.change_password(
            session=session, user=user, current=PASSWORD, new="a new long passphrase"
        )
        assert sessions.user_for_token(session=session, token=other, idle_timeout_s=60) is None
        fresh = sessions.start(session=session, user=user)
        assert sessions.revoke_all(session=session, user_id=user.id) == 1
        for token in (third, fresh):
            assert sessions.user_for_token(session=session, token=token, idle_timeout_s=60) is None


def test_password_change_form(api: ApiUser, client: TestClient) -> None:
    assert _login(client) == 303
    csrf = _token(client, "/account")
    data = {"csrf_token": csrf, "current_password": "wrong", "new_password": "x" * 20}
    assert client.post("/account/password", data=data).status_code == 400
    data = {"csrf_token": csrf, "current_password": PASSWORD, "new_password": "short"}
    assert client.post("/account/password", data=data).status_code == 400
    data["new_password"] = "a much longer passphrase"
    answer = client.post("/account/password", data=data)
    assert answer.status_code == 200
    assert client.get("/api/v1/me").status_code == 200
    client.cookies.clear()
    assert _login(client, password="a much longer passphrase") == 303


def test_password_rules(client: TestClient, session_factory: sessionmaker[Session]) -> None:
    with session_scope(session_factory) as session:
        for bad in ["elevenchars", " " * 20, "aaaaaaaaaaaaaaaa"]:
            try:
                users.create_user(session=session, email="x@example.com", password=bad)
            except Invalid:
                continue
            raise AssertionError(f"{bad!r} was accepted")


def test_login_is_throttled_per_account_with_retry_after(api: ApiUser, client: TestClient) -> None:
    throttle: LoginThrottle = client.app.state.login_throttle  # type: ignore[attr-defined]
    try:
        for _ in range(10):
            assert _login(client, password="wrong password!") == 400
        data = {"email": "alice@example.com", "password": PASSWORD, "csrf_token": _token(client)}
        answer = client.post("/login", data=data, follow_redirects=False)
        assert answer.status_code == 429
        assert int(answer.headers["retry-after"]) > 0
    finally:
        throttle.reset()


def test_throttle_counts_per_address_and_window() -> None:
    now = [0.0]
    throttle = LoginThrottle(per_account=3, per_address=5, window_s=60, clock=lambda: now[0])
    for i in range(5):
        throttle.failed(email=f"u{i}@x", address="1.2.3.4")
    assert throttle.retry_after(email="new@x", address="1.2.3.4") == 60
    assert throttle.retry_after(email="new@x", address="5.6.7.8") == 0
    now[0] = 61
    assert throttle.retry_after(email="new@x", address="1.2.3.4") == 0


def test_nul_in_login_email_is_a_clean_400(api: ApiUser, client: TestClient) -> None:
    assert _login(client, email="alice\x00@example.com", password="nope nope nope") == 400


def test_plain_key_cannot_mint_or_revoke_keys(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    created = api.post("/api/v1/api-keys", json={"name": "plain"})
    assert created.status_code == 201 and created.json()["can_manage_keys"] is False
    api = ApiUser(api.id, api.email, created.json()["key"], api.client)
    answer = api.post("/api/v1/api-keys", json={"name": "more"})
    assert answer.status_code == 403
    key_id = api.get("/api/v1/api-keys").json()[0]["id"]
    assert api.delete(f"/api/v1/api-keys/{key_id}").status_code == 403


def test_expired_keys_fail_and_use_is_recorded(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    assert api.get("/api/v1/me").status_code == 200
    with session_scope(session_factory) as session:
        key = session.query(ApiKey).filter_by(user_id=api.id, name="tests").one()
        assert key.last_used_at is not None
        key.expires_at = datetime.now(UTC) - timedelta(seconds=1)
        session.commit()
    assert api.get("/api/v1/me").status_code == 401


def test_new_key_is_not_put_in_the_cookie(api: ApiUser, client: TestClient) -> None:
    assert _login(client) == 303
    csrf = _token(client, "/account")
    before = client.cookies.get("relevo_session")
    answer = client.post("/account/api-keys", data={"csrf_token": csrf, "name": "k"})
    assert answer.status_code == 200
    code = BeautifulSoup(answer.text, "html.parser").select_one("#new-key code")
    assert code is not None and code.text.startswith("rlv_")
    assert client.cookies.get("relevo_session") == before


def test_body_over_the_limit_is_413(api: ApiUser) -> None:
    big = b'{"name": "' + b"x" * (11 * 1024 * 1024) + b'"}'
    answer = api.post("/api/v1/cases", content=big, headers={"Content-Type": "application/json"})
    assert answer.status_code == 413
    assert set(answer.json()) == {"detail"}


def test_security_headers(client: TestClient) -> None:
    answer = client.get("/login")
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert (
        "'unsafe-inline'"
        not in answer.headers["content-security-policy"].split("script-src")[1].split(";")[0]
    )
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "same-origin"
    assert answer.headers["cache-control"] == "no-store"
