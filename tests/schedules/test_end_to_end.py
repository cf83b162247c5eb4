"""A real run of a case ends: its alert rules are evaluated and the webhook is called."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.schemas import ScheduleBody
from app.db import as_utc, session_scope
from app.models import Run
from app.schedules.service import get_schedule, set_schedule
from app.schedules.ticks import fire_and_deliver
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import ApiUser
from tests.schedules.receivers import webhook_receiver
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id

pytestmark = pytest.mark.runner


def test_a_finished_run_sends_its_alert(api: ApiUser, movies_engine: MoviesEngine) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))
    ids = add_queries(api, case["id"], ["star wars", "batman"])
    first = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
    detail = api.get(f"/api/v1/cases/{case['id']}/runs/{first['id']}").json()
    second_doc = next(q for q in detail["queries"] if q["text"] == "star wars")["docs"][1]["id"]
    ratings = {"ratings": [{"doc_id": second_doc, "rating": 3}]}
    api.put(f"/api/v1/cases/{case['id']}/queries/{ids['star wars']}/ratings", json=ratings)
    with webhook_receiver() as (url, received):
        hook = api.post("/api/v1/webhooks", json={"name": "r", "url": url, "secret": "k"}).json()
        body = {"kind": "below", "threshold": 100, "webhook_ids": [hook["id"]]}
        assert api.post(f"/api/v1/cases/{case['id']}/alerts", json=body).status_code == 201
        run = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
        assert run["status"] == "finished"
        assert received.arrived.wait(timeout=30)
    headers, raw = received.requests[0]
    assert (
        headers["x-relevo-signature"] == "sha256=" + hmac.new(b"k", raw, hashlib.sha256).hexdigest()
    )
    payload = json.loads(raw)
    assert payload["run"]["id"] == run["id"]
    assert payload["run"]["score"] == run["case_score"] < 100
    assert payload["previous"]["id"] == first["id"]


def test_the_servers_loop_starts_a_scheduled_run(
    api: ApiUser, app: FastAPI, session_factory: sessionmaker[Session], movies_engine: MoviesEngine
) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"])
    add_queries(api, case["id"], ["star wars"])
    with session_scope(session_factory) as db:
        from app.models import Case

        stored = db.get(Case, case["id"])
        assert stored is not None
        schedule = set_schedule(session=db, case=stored, body=ScheduleBody(cron="* * * * *"))
        due = as_utc(schedule.next_run_at)
    manager = app.state.run_manager
    started: list[int] = []

    async def tick() -> None:
        def start(run_id: int) -> None:
            started.append(run_id)
            manager.start(run_id)

        await fire_and_deliver(session_factory=session_factory, start=start, now=due)
        await asyncio.gather(*[manager._tasks[r] for r in started if r in manager._tasks])

    asyncio.run_coroutine_threadsafe(tick(), manager._loop).result(timeout=60)
    with session_scope(session_factory) as db:
        runs = list(db.scalars(select(Run).where(Run.case_id == case["id"])))
        assert [(r.trigger, r.status) for r in runs] == [("schedule", "finished")]
        assert started == [runs[0].id]
        stored = db.get(Case, case["id"])
        assert stored is not None
        after = get_schedule(session=db, case=stored)
        assert after is not None and as_utc(after.next_run_at) > due
