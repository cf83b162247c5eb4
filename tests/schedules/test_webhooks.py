"""Webhooks: CRUD, the outbound policy, signed deliveries with retries, and e-mail."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Delivery, Webhook
from app.outbound.policy import OutboundPolicy, current_policy, install_policy
from app.schedules import delivery
from app.schedules.delivery import DeliveryConfig
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import alerting_case, deliver, new_case
from tests.schedules.helpers import fast_retries as fast_retries
from tests.schedules.receivers import smtp_sink, webhook_receiver

SECRET = "s3cret-for-tests"


@pytest.fixture
def private_blocked() -> Iterator[None]:
    previous = current_policy()
    install_policy(OutboundPolicy(block_private=True))
    yield
    install_policy(previous)


def _webhook(api: ApiUser, url: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/v1/webhooks", json={"name": "ops", "url": url, **extra})
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def test_webhook_crud_keeps_the_secret_write_only(
    api: ApiUser, other_api: ApiUser, db: Session
) -> None:
    hook = _webhook(api, "https://hooks.example.com/x", secret=SECRET)
    assert hook["has_secret"] is True and "secret" not in hook
    stored = db.get(Webhook, hook["id"])
    assert stored is not None and stored.secret is not None and SECRET not in stored.secret
    assert [w["id"] for w in api.get("/api/v1/webhooks").json()] == [hook["id"]]
    assert other_api.get(f"/api/v1/webhooks/{hook['id']}").status_code == 404
    assert other_api.get("/api/v1/webhooks").json() == []
    renamed = api.patch(f"/api/v1/webhooks/{hook['id']}", json={"name": "slack", "secret": ""})
    assert renamed.json()["name"] == "slack" and renamed.json()["has_secret"] is False
    assert api.post("/api/v1/webhooks", json={"name": "x", "url": "ftp://a/b"}).status_code == 422
    assert api.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    assert api.get(f"/api/v1/webhooks/{hook['id']}").status_code == 404


def test_a_private_address_is_refused_at_creation(api: ApiUser, private_blocked: None) -> None:
    response = api.post("/api/v1/webhooks", json={"name": "x", "url": "http://127.0.0.1:9/h"})
    assert response.status_code == 422
    assert "not allowed" in response.text


@pytest.mark.runner
def test_a_delivery_is_signed_and_retried_until_it_lands(
    api: ApiUser, session_factory: sessionmaker[Session], fast_retries: None
) -> None:
    with webhook_receiver() as (url, received), session_scope(session_factory) as db:
        received.codes = [500, 503]  # two failures, then 200
        hook = _webhook(api, url, secret=SECRET)
        run_id = alerting_case(api, db, [hook["id"]])
        deliver(session_factory, run_id)
    assert len(received.requests) == 3
    headers, body = received.requests[-1]
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert headers["x-relevo-signature"] == f"sha256={expected}"
    assert headers["x-relevo-event"] == "alert.triggered"
    payload = json.loads(body)
    assert payload["run"] == {"id": run_id, "score": 55.0, "status": "finished", "trigger": "user"}
    assert payload["delta"] == -15.0
    assert [q["delta"] for q in payload["worst_queries"]] == [-40.0, -5.0]
    assert payload["case"]["url"].startswith("http://relevo.test/cases/")
    assert payload["text"].startswith('Relevo alert on case "Movies"')
    events = api.get(f"/api/v1/cases/{payload['case']['id']}/alerts/events").json()
    (logged,) = events[0]["deliveries"]
    assert (logged["status"], logged["code"], logged["attempts"]) == ("delivered", 200, 3)


@pytest.mark.runner
def test_a_receiver_that_never_answers_well_is_given_up(
    api: ApiUser, session_factory: sessionmaker[Session], fast_retries: None
) -> None:
    with webhook_receiver() as (url, received), session_scope(session_factory) as db:
        received.codes = [500] * 10
        hook = _webhook(api, url)
        run_id = alerting_case(api, db, [hook["id"]])
        deliver(session_factory, run_id)
        (row,) = db.scalars(select(Delivery))
        assert (row.status, row.code, row.attempts) == ("failed", 500, 3)
    assert len(received.requests) == 3


@pytest.mark.runner
def test_a_refused_address_is_logged_without_connecting(
    api: ApiUser, session_factory: sessionmaker[Session], fast_retries: None
) -> None:
    with webhook_receiver() as (url, received), session_scope(session_factory) as db:
        hook = _webhook(api, url)  # allowed when created
        run_id = alerting_case(api, db, [hook["id"]])
        previous = current_policy()
        install_policy(OutboundPolicy(block_private=True))
        try:
            deliver(session_factory, run_id)
        finally:
            install_policy(previous)
        (row,) = db.scalars(select(Delivery))
        assert (row.status, row.attempts) == ("refused", 1)
        assert "not allowed" in (row.error or "")
    assert received.requests == []


@pytest.mark.runner
def test_alerts_are_emailed_when_smtp_is_configured(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    with smtp_sink() as (smtp_url, messages), session_scope(session_factory) as db:
        previous = delivery.install_config(DeliveryConfig(smtp_url=smtp_url, backoff_s=(0.1,)))
        try:
            run_id = alerting_case(api, db, [], email=["oncall@example.com"])
            deliver(session_factory, run_id)
        finally:
            delivery.install_config(previous)
        (row,) = db.scalars(select(Delivery))
        assert (row.status, row.email) == ("delivered", "oncall@example.com")
    (message,) = messages
    assert "To: oncall@example.com" in message
    assert "Subject: Relevo alert: Movies" in message


def test_a_webhook_shared_with_a_team_is_usable_by_its_members(
    api: ApiUser, other_api: ApiUser
) -> None:
    team = api.post("/api/v1/teams", json={"name": "Search"}).json()
    api.put(f"/api/v1/teams/{team['id']}/members", json={"email": other_api.email})
    hook = _webhook(api, "https://hooks.example.com/s", team_ids=[team["id"]])
    assert hook["team_ids"] == [team["id"]]
    assert [w["id"] for w in other_api.get("/api/v1/webhooks").json()] == [hook["id"]]
    case_id, _ = new_case(other_api)
    body = {"kind": "below", "threshold": 10, "webhook_ids": [hook["id"]]}
    # The team's webhook takes the alerts of the cases the team (or its owner) may see.
    assert other_api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 422
    other_api.patch(f"/api/v1/cases/{case_id}", json={"team_ids": [team["id"]]})
    assert other_api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    assert other_api.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 403
    assert (
        other_api.patch(f"/api/v1/webhooks/{hook['id']}", json={"team_ids": []}).status_code == 403
    )
    assert (
        api.post(
            "/api/v1/webhooks", json={"name": "x", "url": "https://a.b/c", "team_ids": [999]}
        ).status_code
        == 404
    )
    api.patch(f"/api/v1/webhooks/{hook['id']}", json={"team_ids": []})
    assert other_api.get(f"/api/v1/webhooks/{hook['id']}").status_code == 404
