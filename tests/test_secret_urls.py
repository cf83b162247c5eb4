"""Secrets and URLs: a change of origin drops every stored secret unless new ones come with
it (whatever else the body says), and credentials in a URL are kept sealed, never in clear."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.secret_box import Place, unseal
from tests.fixtures.users import ApiUser
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.schedules.helpers import alerting_case, deliver
from tests.schedules.helpers import fast_retries as fast_retries
from tests.schedules.receivers import webhook_receiver
from tests.support.api import make_endpoint
from tests.support.books import add_pairs, make_book
from tests.support.recording_engine import RecordingEngine
from tests.support.recording_engine import recording_engine as start_recording_engine

__all__ = ["fast_retries"]  # a fixture used here


@pytest.fixture
def recording_engine() -> Iterator[RecordingEngine]:
    with start_recording_engine() as engine:
        yield engine


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def _team_with(owner: ApiUser, member: ApiUser) -> int:
    team = owner.post("/api/v1/teams", json={"name": "Raters"}).json()
    added = owner.put(
        f"/api/v1/teams/{team['id']}/members", json={"email": member.email, "role": "member"}
    )
    assert added.status_code == 200, added.text
    return int(team["id"])


def _judge(api: ApiUser, base_url: str, **extra: Any) -> dict[str, Any]:
    body = {
        "name": "judge",
        "provider": "openai",
        "base_url": base_url,
        "model": "gpt-fake",
        "api_key": "sk-owner-key",
        "headers": {"X-Org": "org-secret"},
        "requests_per_minute": 100_000,
        **extra,
    }
    response = api.post("/api/v1/judges", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _row(db: Session, sql: str, row_id: int) -> Any:
    return db.execute(text(sql), {"id": row_id}).one()


# --- a change of origin ---


def test_a_member_moving_a_shared_judge_elsewhere_takes_no_secret_with_it(
    api: ApiUser, other_api: ApiUser, llm: FakeLLM
) -> None:
    team_id = _team_with(api, other_api)
    judge = _judge(api, "http://127.0.0.1:9/v1", team_ids=[team_id])
    url = f"/api/v1/judges/{judge['id']}"
    same = other_api.patch(url, json={"base_url": "http://127.0.0.1:9/v2", "api_key": None})
    assert same.json()["has_api_key"] is True and same.json()["header_names"] == ["X-Org"]
    # null for the key and the headers is "not sent": they go all the same.
    moved = other_api.patch(
        url, json={"base_url": f"{llm.url}/v1", "api_key": None, "headers": None}
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["has_api_key"] is False and moved.json()["header_names"] == []
    book = make_book(other_api)
    add_pairs(other_api, book["id"], [("star wars", "d1")])
    tested = other_api.post(
        f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"], "n": 1}
    )
    assert tested.status_code == 200 and len(llm.requests) == 1, tested.text
    sent = json.dumps([r.headers for r in llm.requests])
    assert "sk-owner-key" not in sent and "org-secret" not in sent
    # New secrets sent with the move are kept.
    back = api.patch(
        url, json={"base_url": "http://127.0.0.1:9/v1", "api_key": "k2", "headers": {"X": "y"}}
    )
    assert back.json()["has_api_key"] is True and back.json()["header_names"] == ["X"]


def test_a_member_moving_a_shared_endpoint_elsewhere_takes_no_secret_with_it(
    api: ApiUser, other_api: ApiUser, recording_engine: RecordingEngine
) -> None:
    team_id = _team_with(api, other_api)
    endpoint = make_endpoint(
        api,
        "http://127.0.0.1:9/movies",
        headers={"X-Api-Token": "owner-token"},
        basic_auth="owner:pw",
        team_ids=[team_id],
    )
    url = f"/api/v1/search-endpoints/{endpoint['id']}"
    moved = other_api.patch(
        url, json={"url": recording_engine.index_url, "headers": None, "basic_auth": None}
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["header_names"] == [] and moved.json()["has_basic_auth"] is False
    report = other_api.post(f"{url}/test", json={"query": "q"})
    assert report.json()["ok"] is True, report.text
    (seen,) = recording_engine.seen
    assert "x-api-token" not in seen and "authorization" not in seen


def test_moving_a_webhook_elsewhere_drops_its_secret_and_credentials(
    api: ApiUser, db: Session
) -> None:
    hook = api.post(
        "/api/v1/webhooks",
        json={"name": "ops", "url": "https://u:pw@hooks.example.com/a", "secret": "sign-key"},
    ).json()
    url = f"/api/v1/webhooks/{hook['id']}"
    same = api.patch(url, json={"url": "https://hooks.example.com/b"}).json()
    assert same["has_secret"] is True and same["has_basic_auth"] is True
    moved = api.patch(url, json={"url": "https://elsewhere.example.com/b", "name": "x"}).json()
    assert moved["has_secret"] is False and moved["has_basic_auth"] is False
    assert tuple(
        _row(db, "SELECT secret, basic_auth FROM webhooks WHERE id = :id", hook["id"])
    ) == (
        None,
        None,
    )
    resent = api.patch(url, json={"url": "https://third.example.com/", "secret": "new"}).json()
    assert resent["has_secret"] is True


# --- credentials in URLs ---


def test_credentials_in_a_judge_url_become_a_sealed_authorization_header(
    api: ApiUser, other_api: ApiUser, llm: FakeLLM, db: Session
) -> None:
    team_id = _team_with(api, other_api)
    judge = _judge(
        api, llm.url.replace("http://", "http://bob:pa55word@") + "/v1", team_ids=[team_id]
    )
    assert judge["base_url"] == f"{llm.url}/v1"
    assert judge["header_names"] == ["Authorization", "X-Org"]
    seen = other_api.get(f"/api/v1/judges/{judge['id']}").text
    assert "pa55word" not in seen and "bob" not in seen
    base_url, headers = _row(db, "SELECT base_url, headers FROM judges WHERE id = :id", judge["id"])
    headers = json.loads(headers) if isinstance(headers, str) else headers
    assert "pa55word" not in base_url + json.dumps(headers)
    place = Place("judges", "headers", judge["id"], "Authorization")
    basic = "Basic " + base64.b64encode(b"bob:pa55word").decode()
    assert unseal(headers["Authorization"], place=place) == basic
    # The headers it had are kept when credentials come in a URL of the same origin.
    patched = api.patch(
        f"/api/v1/judges/{judge['id']}",
        json={"base_url": llm.url.replace("http://", "http://eve:other@") + "/v2"},
    )
    assert patched.json()["header_names"] == ["Authorization", "X-Org"]
    both = api.post(
        "/api/v1/judges",
        json={
            "name": "j",
            "provider": "openai",
            "model": "m",
            "base_url": "http://bob:pa55word@127.0.0.1:9/v1",
            "headers": {"authorization": "Bearer x"},
        },
    )
    assert both.status_code == 422 and "pa55word" not in both.text


@pytest.mark.runner
def test_credentials_in_a_webhook_url_are_sealed_and_sent_as_basic_auth(
    api: ApiUser, session_factory: sessionmaker[Session], fast_retries: None
) -> None:
    with webhook_receiver() as (url, received), session_scope(session_factory) as db:
        with_credentials = url.replace("http://", "http://hook:pa55word@")
        hook = api.post("/api/v1/webhooks", json={"name": "ops", "url": with_credentials}).json()
        assert hook["url"] == url and hook["has_basic_auth"] is True
        listed = api.get("/api/v1/webhooks").text
        assert "pa55word" not in listed
        stored_url, auth = _row(
            db, "SELECT url, basic_auth FROM webhooks WHERE id = :id", hook["id"]
        )
        assert stored_url == url and auth.startswith("sealed:v2:") and "pa55word" not in auth
        run_id = alerting_case(api, db, [hook["id"]])
        deliver(session_factory, run_id)
    headers, _body = received.requests[-1]
    assert headers["authorization"] == "Basic " + base64.b64encode(b"hook:pa55word").decode()
