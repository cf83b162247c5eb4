"""One poisoned delivery fails alone: hostile addresses, case names, secrets and receivers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.schemas import ScheduleBody
from app.db import session_scope
from app.jobs.hooks import Hook
from app.models import Alert, Case, Delivery
from app.schedules import delivery
from app.schedules.delivery import DeliveryConfig, header_text
from app.schedules.service import set_schedule
from app.schedules.ticks import evaluate_ended, fire_and_deliver
from app.secret_box import Keyring, install_keyring
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case
from tests.schedules.receivers import smtp_sink, webhook_receiver

INJECTED = "ops@example.com\nBcc:x@y.z"
LISTED = "a@example.com,b@example.com"
HOSTILE_NAME = "Movies\r\nBcc: spy@evil.test"


@pytest.fixture
def mail_and_fast_retries() -> Iterator[list[str]]:
    """An SMTP sink as the alerts' server, and retries 0.1 and 0.2 s apart (3 attempts)."""
    with smtp_sink() as (smtp_url, messages):
        previous = delivery.install_config(
            DeliveryConfig(base_url="http://relevo.test", smtp_url=smtp_url, backoff_s=(0.1, 0.2))
        )
        try:
            yield messages
        finally:
            delivery.install_config(previous)


def _webhook(api: ApiUser, url: str, **extra: Any) -> int:
    response = api.post("/api/v1/webhooks", json={"name": "ops", "url": url, **extra})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _unreadable_webhook(api: ApiUser, url: str) -> int:
    """A webhook whose secret was sealed with a key this server no longer has."""
    previous = install_keyring(Keyring((Fernet.generate_key().decode(),)))
    try:
        return _webhook(api, url, secret="sealed with a lost key")
    finally:
        install_keyring(previous)


def _poisoned_case(
    api: ApiUser, db: Session, hook_ids: list[int], emails: list[str], stored: list[str]
) -> int:
    """A case with a drop alert to these webhooks and addresses (``stored`` written as they
    are, like rows from before addresses were checked); return its run that dropped."""
    case_id, queries = new_case(api, queries=2, name=HOSTILE_NAME)
    body = {"kind": "drop", "points": 5, "webhook_ids": hook_ids, "email": emails}
    created = api.post(f"/api/v1/cases/{case_id}/alerts", json=body)
    assert created.status_code == 201, created.text
    alert = db.get(Alert, created.json()["id"])
    assert alert is not None
    alert.email = [*emails, *stored]
    db.commit()
    add_run(db, case_id, queries, [80, 60])
    return add_run(db, case_id, queries, [40, 50]).id


def _rows(db: Session) -> dict[str, tuple[str, int, str, datetime | None]]:
    """Each delivery by its address or webhook id: status, attempts, error, next attempt."""
    db.expire_all()
    rows = db.scalars(select(Delivery).order_by(Delivery.id))
    return {
        str(r.email or r.webhook_id): (r.status, r.attempts, r.error or "", r.next_attempt_at)
        for r in rows
    }


@pytest.mark.runner
def test_each_poisoned_delivery_fails_alone_and_the_others_are_sent(
    api: ApiUser, session_factory: sessionmaker[Session], mail_and_fast_retries: list[str]
) -> None:
    messages = mail_and_fast_retries
    with (
        webhook_receiver() as (good_url, good),
        webhook_receiver() as (broken_url, broken),
        session_scope(session_factory) as db,
    ):
        broken.codes = [0] * 10  # closes every connection without an answer
        fine = _webhook(api, good_url, secret="k")
        locked = _unreadable_webhook(api, good_url)
        breaking = _webhook(api, broken_url)
        run_id = _poisoned_case(
            api, db, [fine, locked, breaking], ["oncall@example.com"], [INJECTED, LISTED]
        )
        events = evaluate_ended(session_factory=session_factory, run_id=run_id)
        asyncio.run(delivery.drain(session_factory=session_factory, event_ids=events))
        rows = _rows(db)
    assert {k: v[:2] for k, v in rows.items()} == {
        str(fine): ("delivered", 1),
        str(locked): ("failed", 3),
        str(breaking): ("failed", 3),
        "oncall@example.com": ("delivered", 1),
        INJECTED: ("failed", 3),
        LISTED: ("failed", 3),
    }
    assert "secret" in rows[str(locked)][2]
    assert "RemoteProtocolError" in rows[str(breaking)][2]
    assert "line break" in rows[INJECTED][2]
    assert "more than one address" in rows[LISTED][2]
    assert len(good.requests) == 1 and len(broken.requests) == 3
    (message,) = messages  # only the good address got mail, with a subject on one line
    head = message.split("\r\n\r\n")[0].split("\r\n")
    assert "To: oncall@example.com" in head
    assert "Subject: Relevo alert: Movies Bcc: spy@evil.test" in head
    assert not [line for line in head if line.lower().startswith(("bcc", "cc"))]
    assert "x@y.z" not in message


@pytest.mark.runner
def test_the_minute_job_goes_on_past_poisoned_deliveries(
    api: ApiUser, session_factory: sessionmaker[Session], mail_and_fast_retries: list[str]
) -> None:
    with webhook_receiver() as (url, received), session_scope(session_factory) as db:
        locked = _unreadable_webhook(api, url)
        run_id = _poisoned_case(api, db, [locked], [], [INJECTED])
        evaluate_ended(session_factory=session_factory, run_id=run_id)
        scheduled, _ = new_case(api, name="Nightly")
        case = db.get(Case, scheduled)
        assert case is not None
        t0 = datetime(2030, 1, 1, tzinfo=UTC)
        set_schedule(session=db, case=case, body=ScheduleBody(cron="* * * * *"), now=t0)
        db.commit()  # services flush; the test commits what other sessions read
        started: list[int] = []
        due = t0 + timedelta(minutes=1)
        fired = asyncio.run(
            fire_and_deliver(session_factory=session_factory, start=started.append, now=due)
        )
        rows = _rows(db)
    assert [f.case_id for f in fired] == [scheduled] and started == [fired[0].run_id]
    for key in (str(locked), INJECTED):  # tried once each, recorded, due again later
        status, attempts, error, next_at = rows[key]
        assert (status, attempts) == ("pending", 1) and error and next_at is not None
    assert received.requests == []


def test_one_failing_minute_work_does_not_stop_the_others() -> None:
    done: list[str] = []
    minute: Hook[str] = Hook("a minute")

    async def breaks(_: str) -> None:
        raise RuntimeError("a poisoned delivery")

    async def runs(event: str) -> None:
        done.append(event)

    minute.add("a-breaking-work", breaks)
    minute.add("a-working-work", runs)
    minute.add("a-breaking-work", breaks)  # added again: replaced, done once
    asyncio.run(minute("ran"))
    assert done == ["ran"] and minute.names() == ["a-breaking-work", "a-working-work"]


@pytest.mark.parametrize(
    ("name", "subject"),
    [
        ("Movies\r\nBcc: spy@evil.test", "Movies Bcc: spy@evil.test"),
        ("a\u2028b\x85c\x00d\ud800e", "a b c d e"),
        ("  plain  ", "plain"),
    ],
)
def test_a_case_name_is_one_header_line(name: str, subject: str) -> None:
    assert header_text(name) == subject


@pytest.mark.parametrize(
    ("emails", "problem"),
    [
        ([INJECTED], "line break"),
        (["ops@example.com\r\nBcc: x@y.z"], "line break"),
        (["ops@example.com\u2028Bcc: x@y.z"], "line break"),
        ([LISTED], "more than one address"),
        (["a@example.com; b@example.com"], "more than one address"),
        (["Ops <ops@example.com>"], "not an e-mail address"),
        (["ops@localhost"], "not an e-mail address"),
        (["ops@127.0.0.1"], "not an e-mail address"),
        (["ops@-example.com"], "not an e-mail address"),
        (['"o p"@example.com'], "not an e-mail address"),
        (["ops..x@example.com"], "not an e-mail address"),
        (["x" * 65 + "@example.com"], "not an e-mail address"),
        ([",".join(f"u{i}@example.com" for i in range(40))], "more than one address"),
    ],
)
def test_alert_addresses_are_checked_at_creation_and_change(
    api: ApiUser, emails: list[str], problem: str
) -> None:
    case_id, _ = new_case(api)
    url = f"/api/v1/cases/{case_id}/alerts"
    created = api.post(url, json={"kind": "below", "threshold": 5, "email": emails})
    assert created.status_code == 422 and problem in created.text
    fine = api.post(url, json={"kind": "below", "threshold": 5, "email": ["ops@example.com"]})
    assert fine.status_code == 201
    changed = api.patch(f"{url}/{fine.json()['id']}", json={"email": emails})
    assert changed.status_code == 422 and problem in changed.text
    assert api.get(f"{url}/{fine.json()['id']}").json()["email"] == ["ops@example.com"]


def test_twenty_plain_addresses_are_the_most_a_rule_takes(api: ApiUser) -> None:
    case_id, _ = new_case(api)
    url = f"/api/v1/cases/{case_id}/alerts"
    twenty = [f"team.{i}+alerts@mail.example.co.uk" for i in range(20)]
    created = api.post(url, json={"kind": "below", "threshold": 5, "email": twenty})
    assert created.status_code == 201 and created.json()["email"] == twenty
    one_more = [*twenty, "late@example.com"]
    assert api.post(url, json={"kind": "below", "threshold": 5, "email": one_more}).status_code == (
        422
    )
