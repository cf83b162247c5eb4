"""A webhook shared with a team: only its owner re-points or re-keys it, and a case's alerts
go only to webhooks whose owner or teams may see the case."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Delivery, Webhook
from app.schedules import delivery
from app.schedules.delivery import DeliveryConfig
from app.schedules.ticks import evaluate_ended
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case
from tests.schedules.receivers import webhook_receiver


def _team(owner: ApiUser, member: ApiUser) -> int:
    team = owner.post("/api/v1/teams", json={"name": "Search"}).json()
    owner.put(f"/api/v1/teams/{team['id']}/members", json={"email": member.email})
    return int(team["id"])


def _webhook(api: ApiUser, url: str, **extra: Any) -> int:
    response = api.post("/api/v1/webhooks", json={"name": "ops", "url": url, **extra})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def test_only_the_owner_re_points_or_re_keys_a_shared_webhook(
    api: ApiUser, other_api: ApiUser, db: Session
) -> None:
    team = _team(api, other_api)
    hook = _webhook(api, "https://hooks.example.com/ops", secret="k", team_ids=[team])
    path = f"/api/v1/webhooks/{hook}"
    for body in (
        {"url": "https://attacker.example.net/steal"},
        {"secret": "mine now"},
        {"secret": ""},
        {"name": "renamed", "url": "https://attacker.example.net/steal"},
    ):
        refused = other_api.patch(path, json=body)
        assert refused.status_code == 403, body
        assert (
            refused.json()["detail"]
            == "Only the owner of this webhook may change its URL or secret."
        )
    db.expire_all()
    stored = db.get(Webhook, hook)
    assert stored is not None
    assert (stored.name, stored.url, stored.secret is not None) == (
        "ops",
        "https://hooks.example.com/ops",
        True,
    )
    renamed = other_api.patch(path, json={"name": "Search alerts"})  # members still rename
    assert renamed.status_code == 200 and renamed.json()["url"] == "https://hooks.example.com/ops"
    moved = api.patch(path, json={"url": "https://hooks.example.com/new", "secret": "k2"})
    assert moved.status_code == 200 and moved.json()["url"] == "https://hooks.example.com/new"


def test_an_alert_takes_only_webhooks_that_may_see_its_case(
    api: ApiUser, other_api: ApiUser
) -> None:
    team = _team(api, other_api)
    members_hook = _webhook(other_api, "https://hooks.example.com/bob", team_ids=[team])
    own_hook = _webhook(api, "https://hooks.example.com/alice")
    case_id, _ = new_case(api)  # not shared
    url = f"/api/v1/cases/{case_id}/alerts"
    refused = api.post(url, json={"kind": "below", "threshold": 5, "webhook_ids": [members_hook]})
    assert refused.status_code == 422
    assert f"Webhook {members_hook} may not receive case {case_id}'s alerts" in refused.text
    alert = api.post(url, json={"kind": "below", "threshold": 5, "webhook_ids": [own_hook]})
    assert alert.status_code == 201
    changed = api.patch(f"{url}/{alert.json()['id']}", json={"webhook_ids": [members_hook]})
    assert changed.status_code == 422
    watch = api.get(f"/api/v1/cases/{case_id}/watch").json()  # the card offers only these
    assert [w["id"] for w in watch["webhooks"]] == [own_hook]
    api.patch(f"/api/v1/cases/{case_id}", json={"team_ids": [team]})
    assert (
        api.post(
            url, json={"kind": "below", "threshold": 5, "webhook_ids": [members_hook]}
        ).status_code
        == 201
    )


@pytest.mark.runner
def test_a_case_no_longer_shared_stops_alerting_the_members_webhook(
    api: ApiUser, other_api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    previous = delivery.install_config(DeliveryConfig(base_url="http://relevo.test"))
    try:
        with (
            webhook_receiver() as (alice_url, alice_got),
            webhook_receiver() as (bob_url, bob_got),
            session_scope(session_factory) as db,
        ):
            team = _team(api, other_api)
            bobs = _webhook(other_api, bob_url, team_ids=[team])  # Bob's, for the team
            alices = _webhook(api, alice_url)
            case_id, queries = new_case(api, queries=2, name="Private roadmap")
            api.patch(f"/api/v1/cases/{case_id}", json={"team_ids": [team]})
            body = {"kind": "below", "threshold": 90, "webhook_ids": [bobs, alices]}
            assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
            # Alice stops sharing the case: Bob's webhook may no longer hear of it.
            api.patch(f"/api/v1/cases/{case_id}", json={"team_ids": []})
            run = add_run(db, case_id, queries, [40, 50])
            events = evaluate_ended(session_factory=session_factory, run_id=run.id)
            asyncio.run(delivery.drain(session_factory=session_factory, event_ids=events))
            db.expire_all()
            rows = {
                r.webhook_id: (r.status, r.attempts, r.error) for r in db.scalars(select(Delivery))
            }
    finally:
        delivery.install_config(previous)
    assert rows[alices] == ("delivered", 1, None)
    assert rows[bobs] == (
        "refused",
        1,
        f"Not sent: neither the owner of webhook {bobs} nor its teams may see case {case_id}.",
    )
    assert bob_got.requests == []
    assert json.loads(alice_got.requests[0][1])["case"]["name"] == "Private roadmap"
