"""Endpoint secrets at rest: sealed in the database, sent in clear to the engine only,
and an endpoint whose secrets no key opens makes its queries errors (never a 500)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app import secret_box
from app.db import session_scope
from app.secret_box import PREFIX, Keyring, Place
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.pages import login, one, soup
from tests.support.recording_engine import RecordingEngine
from tests.support.recording_engine import recording_engine as start_recording_engine


@pytest.fixture
def recording_engine() -> Iterator[RecordingEngine]:
    with start_recording_engine() as engine:
        yield engine


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    previous = secret_box.current_keyring()
    yield
    secret_box.install_keyring(previous)


def _raw(factory: sessionmaker[Session], endpoint_id: int) -> tuple[dict[str, str], str | None]:
    with session_scope(factory) as session:
        headers, auth = session.execute(
            text("SELECT headers, basic_auth FROM search_endpoints WHERE id = :id"),
            {"id": endpoint_id},
        ).one()
    if isinstance(headers, str):  # SQLite hands JSON back as text
        headers = json.loads(headers)
    assert isinstance(headers, dict)
    return headers, auth


def _open(endpoint_id: int, column: str, value: str, name: str | None = None) -> str:
    return secret_box.unseal(value, place=Place("search_endpoints", column, endpoint_id, name))


def test_secrets_are_sealed_in_the_database(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    created = make_endpoint(
        api,
        "http://127.0.0.1:9/movies",
        headers={"X-Api-Token": "s3cret-header"},
        basic_auth="user:pa55word",
    )
    headers, auth = _raw(session_factory, created["id"])
    assert list(headers) == ["X-Api-Token"]
    assert headers["X-Api-Token"].startswith(PREFIX)
    assert "s3cret-header" not in headers["X-Api-Token"]
    assert auth is not None and auth.startswith(PREFIX) and "pa55word" not in auth
    assert _open(created["id"], "headers", headers["X-Api-Token"], "X-Api-Token") == (
        "s3cret-header"
    )
    assert _open(created["id"], "basic_auth", auth) == "user:pa55word"

    url = f"/api/v1/search-endpoints/{created['id']}"
    patched = api.patch(url, json={"headers": {"X-Other": "other-secret"}, "basic_auth": "a:b"})
    assert patched.status_code == 200 and patched.json()["header_names"] == ["X-Other"]
    headers, auth = _raw(session_factory, created["id"])
    assert _open(created["id"], "headers", headers["X-Other"], "X-Other") == "other-secret"
    assert "other-secret" not in headers["X-Other"]
    assert auth is not None and _open(created["id"], "basic_auth", auth) == "a:b"
    # Credentials given in the URL are sealed as basic auth too.
    in_url = make_endpoint(api, "http://bob:url-pw@127.0.0.1:9/movies")
    _headers, auth = _raw(session_factory, in_url["id"])
    assert auth is not None and "url-pw" not in auth
    assert _open(in_url["id"], "basic_auth", auth) == "bob:url-pw"


def test_the_engine_gets_the_secrets_in_clear(
    api: ApiUser, recording_engine: RecordingEngine
) -> None:
    created = make_endpoint(
        api,
        recording_engine.index_url,
        headers={"X-Api-Token": "s3cret-header"},
        basic_auth="user:pa55word",
    )
    report = api.post(f"/api/v1/search-endpoints/{created['id']}/test", json={"query": "q"})
    assert report.status_code == 200 and report.json()["ok"] is True, report.text
    (seen,) = recording_engine.seen
    assert seen["x-api-token"] == "s3cret-header"
    assert seen["authorization"] == "Basic " + base64.b64encode(b"user:pa55word").decode()


def test_a_secret_no_key_opens_makes_a_clear_error_not_a_500(
    api: ApiUser,
    client: TestClient,
    recording_engine: RecordingEngine,
    restore_keyring: None,
) -> None:
    created = make_endpoint(
        api, recording_engine.index_url, headers={"X-Api-Token": "s3cret-header"}
    )
    secret_box.install_keyring(Keyring((Fernet.generate_key().decode(),)))  # key lost

    report = api.post(f"/api/v1/search-endpoints/{created['id']}/test", json={"query": "q"})
    assert report.status_code == 200
    assert report.json()["ok"] is False
    assert "RELEVO_ENCRYPTION_KEYS" in report.json()["message"]
    assert recording_engine.seen == []  # nothing was sent without the credentials
    # The API and the pages still show the endpoint (its secrets only as their presence).
    assert api.get(f"/api/v1/search-endpoints/{created['id']}").status_code == 200
    token = login(client)
    assert client.get("/endpoints").status_code == 200
    page = client.get(f"/endpoints/{created['id']}")
    assert page.status_code == 200
    tested = soup(client.post(f"/endpoints/{created['id']}/test", data={"csrf_token": token}))
    assert one(tested, "#test-report")["data-ok"] == "false"
    assert "encryption keys" in one(tested, ".report-message").get_text()
    # Entering the secret again (with the current key) makes the endpoint usable.
    url = f"/api/v1/search-endpoints/{created['id']}"
    assert api.patch(url, json={"headers": {"X-Api-Token": "new"}}).status_code == 200
    again = api.post(f"{url}/test", json={"query": "q"})
    assert again.json()["ok"] is True
    assert recording_engine.seen[-1]["x-api-token"] == "new"


@pytest.mark.runner
def test_a_run_on_an_endpoint_with_unreadable_secrets_has_query_errors(
    api: ApiUser, recording_engine: RecordingEngine, restore_keyring: None
) -> None:
    endpoint = make_endpoint(api, recording_engine.index_url, basic_auth="user:pa55word")
    case = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))
    add_queries(api, case["id"], ["star wars", "batman"])
    secret_box.install_keyring(Keyring((Fernet.generate_key().decode(),)))
    response = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true")
    assert response.status_code == 200, response.text
    run = response.json()
    assert run["status"] == "failed" and run["errors"] == 2  # every query errored
    for query in run["queries"]:
        assert query["status"] == "error"
        assert "basic auth are unusable" in query["error"]
        assert "RELEVO_ENCRYPTION_KEYS" in query["error"]
    assert recording_engine.seen == []


def test_a_sealed_value_typed_in_is_sealed_again_and_never_opened(
    api: ApiUser,
    other_api: ApiUser,
    session_factory: sessionmaker[Session],
    recording_engine: RecordingEngine,
) -> None:
    # Copying someone's sealed value (from a dump) into one's own headers is no decryption
    # oracle: the typed text is the value, sealed for this row, and sent as it was typed.
    victim = make_endpoint(
        other_api, "http://127.0.0.1:9/x", headers={"X-Key": "victim-key"}, basic_auth="v:pw"
    )
    stolen_header, stolen_auth = _raw(session_factory, victim["id"])
    legacy = "sealed:v1:" + Fernet(secret_box.current_keyring().keys[0]).encrypt(b"old").decode()
    mine = make_endpoint(
        api,
        recording_engine.index_url,
        headers={"X-Stolen": stolen_header["X-Key"], "X-Legacy": legacy},
        basic_auth=stolen_auth,
    )
    headers, auth = _raw(session_factory, mine["id"])
    assert headers["X-Stolen"] != stolen_header["X-Key"] and auth != stolen_auth
    assert _open(mine["id"], "headers", headers["X-Stolen"], "X-Stolen") == stolen_header["X-Key"]
    report = api.post(f"/api/v1/search-endpoints/{mine['id']}/test", json={"query": "q"})
    assert report.json()["ok"] is True, report.text
    (seen,) = recording_engine.seen
    assert seen["x-stolen"] == stolen_header["X-Key"] and seen["x-legacy"] == legacy
    assert stolen_auth is not None
    assert seen["authorization"] == "Basic " + base64.b64encode(stolen_auth.encode()).decode()
    assert "victim-key" not in json.dumps(seen) and "v:pw" not in json.dumps(seen)


def test_a_sealed_value_copied_to_another_row_or_column_does_not_open(
    api: ApiUser,
    other_api: ApiUser,
    session_factory: sessionmaker[Session],
    recording_engine: RecordingEngine,
) -> None:
    victim = make_endpoint(other_api, "http://127.0.0.1:9/x", basic_auth="v:pw")
    mine = make_endpoint(api, recording_engine.index_url, basic_auth="me:pw")
    _headers, stolen = _raw(session_factory, victim["id"])
    with session_scope(session_factory) as session:  # written straight into the database
        session.execute(
            text("UPDATE search_endpoints SET basic_auth = :a WHERE id = :id"),
            {"a": stolen, "id": mine["id"]},
        )
        session.commit()
    report = api.post(f"/api/v1/search-endpoints/{mine['id']}/test", json={"query": "q"})
    assert report.json()["ok"] is False and "RELEVO_ENCRYPTION_KEYS" in report.json()["message"]
    assert recording_engine.seen == []
    assert stolen is not None
    with pytest.raises(secret_box.SecretUnreadable):  # nor in another column of its row
        secret_box.unseal(stolen, place=Place("search_endpoints", "headers", victim["id"]))
    assert _open(victim["id"], "basic_auth", stolen) == "v:pw"
