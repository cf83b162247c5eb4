"""Schedules: cron in UTC, next_run_at, and each due time firing exactly once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.schemas import ScheduleBody
from app.db import as_utc, session_scope
from app.errors import Invalid
from app.models import Case, CaseSchedule, Run, ScheduleFiring, Sweep
from app.runs import service as run_service
from app.schedules import service
from app.schedules.cron import next_after, normalise
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import new_case

T0 = datetime(2026, 3, 2, 10, 7, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("cron", "expected"),
    [
        ("@hourly", datetime(2026, 3, 2, 11, 0, tzinfo=UTC)),
        ("@daily", datetime(2026, 3, 3, 0, 0, tzinfo=UTC)),
        ("@weekly", datetime(2026, 3, 8, 0, 0, tzinfo=UTC)),  # the next Sunday
        ("*/15 * * * *", datetime(2026, 3, 2, 10, 15, tzinfo=UTC)),
        ("30 3 * * 1-5", datetime(2026, 3, 3, 3, 30, tzinfo=UTC)),
    ],
)
def test_next_after_is_the_first_due_time_in_utc(cron: str, expected: datetime) -> None:
    assert next_after(normalise(cron), T0) == expected


@pytest.mark.parametrize(
    "bad", ["", "* * * *", "61 * * * *", "@yearly", "0 3 * * * *", "x", "0 0 31 2 *"]
)
def test_a_bad_expression_is_refused(bad: str) -> None:
    with pytest.raises(Invalid):
        normalise(bad)


def test_schedule_api_sets_reads_and_deletes(api: ApiUser) -> None:
    case_id, _ = new_case(api)
    url = f"/api/v1/cases/{case_id}/schedule"
    assert api.get(url).status_code == 404
    response = api.put(url, json={"cron": "@daily"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["cron"] == "@daily"
    next_run = datetime.fromisoformat(body["next_run_at"])
    assert next_run > datetime.now(UTC)
    assert (next_run.hour, next_run.minute) == (0, 0)
    assert api.get(url).json()["next_run_at"] == body["next_run_at"]
    assert api.put(url, json={"cron": "every day"}).status_code == 422
    assert api.put(url, json={"cron": "@daily", "try_number": 7}).status_code == 404
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_another_users_case_has_no_schedule_for_them(api: ApiUser, other_api: ApiUser) -> None:
    case_id, _ = new_case(api)
    response = other_api.put(f"/api/v1/cases/{case_id}/schedule", json={"cron": "@hourly"})
    assert response.status_code == 404


def _runs(db: Session, case_id: int) -> list[Run]:
    return list(db.scalars(select(Run).where(Run.case_id == case_id).order_by(Run.id)))


def test_a_due_time_fires_once_and_a_missed_stretch_runs_once(api: ApiUser, db: Session) -> None:
    case_id, _ = new_case(api, queries=2)
    case = db.get(Case, case_id)
    assert case is not None
    service.set_schedule(session=db, case=case, body=ScheduleBody(cron="*/5 * * * *"), now=T0)
    db.commit()  # services flush; the test commits what other sessions read
    assert service.fire_due(session=db, now=T0 + timedelta(minutes=2)) == []
    fired = service.fire_due(session=db, now=datetime(2026, 3, 2, 10, 10, tzinfo=UTC))
    assert [(f.case_id, f.due_at) for f in fired] == [
        (case_id, datetime(2026, 3, 2, 10, 10, tzinfo=UTC))
    ]
    assert service.fire_due(session=db, now=datetime(2026, 3, 2, 10, 10, 30, tzinfo=UTC)) == []
    # Everything was down for two hours: 24 due times missed, one run at start.
    late = datetime(2026, 3, 2, 12, 11, tzinfo=UTC)
    assert len(service.fire_due(session=db, now=late)) == 1
    runs = _runs(db, case_id)
    assert [(r.trigger, r.status, r.total) for r in runs] == [("schedule", "queued", 2)] * 2
    schedule = db.get(CaseSchedule, case_id)
    assert schedule is not None
    assert as_utc(schedule.next_run_at) == datetime(2026, 3, 2, 12, 15, tzinfo=UTC)


def test_a_pinned_try_is_the_one_run(api: ApiUser, db: Session) -> None:
    case_id, _ = new_case(api, queries=1)
    api.patch(f"/api/v1/cases/{case_id}", json={"rows": 20})  # try 2 is current
    case = db.get(Case, case_id)
    assert case is not None and case.current_try_number == 2
    body = ScheduleBody(cron="@hourly", try_number=1)
    service.set_schedule(session=db, case=case, body=body, now=T0)
    db.commit()  # services flush; the test commits what other sessions read
    service.fire_due(session=db, now=T0 + timedelta(hours=1))
    assert [r.try_number for r in _runs(db, case_id)] == [1]


@pytest.mark.runner
def test_processes_racing_for_one_due_time_start_one_run(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, _ = new_case(api, queries=1)
    with session_scope(session_factory) as db:
        case = db.get(Case, case_id)
        assert case is not None
        schedule = service.set_schedule(session=db, case=case, body=ScheduleBody(cron="@daily"))
        due = as_utc(schedule.next_run_at)
    barrier = threading.Barrier(4)
    claimed: list[int] = []

    def server() -> None:
        with session_scope(session_factory) as session:
            barrier.wait()
            claimed.extend(f.case_id for f in service.fire_due(session=session, now=due))

    threads = [threading.Thread(target=server) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    with session_scope(session_factory) as db:
        assert claimed == [case_id]
        assert [r.trigger for r in _runs(db, case_id)] == ["schedule"]
        firings = db.scalar(select(func.count()).select_from(ScheduleFiring))
        assert firings == 1


def test_the_cases_api_carries_the_schedule(api: ApiUser) -> None:
    new_case(api)
    endpoint_id = api.get("/api/v1/search-endpoints").json()[0]["id"]
    body = {
        "name": "Nightly",
        "search_endpoint_id": endpoint_id,
        "query_template": '{"query": {"match": {"title": "#$query##"}}}',
    }
    bad = api.post("/api/v1/cases", json={**body, "schedule": {"cron": "nightly"}})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "schedule", "cron"]
    assert [c["name"] for c in api.get("/api/v1/cases").json()] == ["Movies"]
    created = api.post("/api/v1/cases", json={**body, "schedule": {"cron": "0 3 * * *"}})
    assert created.status_code == 201, created.text
    case = created.json()
    assert case["schedule"] == {"cron": "0 3 * * *", "try_number": None}
    next_run = datetime.fromisoformat(case["next_run_at"])
    assert (next_run.hour, next_run.minute, next_run.utcoffset()) == (3, 0, timedelta(0))
    listed = {c["name"]: c for c in api.get("/api/v1/cases").json()}
    assert listed["Nightly"]["next_run_at"] == case["next_run_at"]
    assert listed["Movies"]["schedule"] is None and listed["Movies"]["next_run_at"] is None
    url = f"/api/v1/cases/{case['id']}"
    assert (
        api.patch(url, json={"schedule": {"cron": "@hourly"}}).json()["schedule"]["cron"]
        == "@hourly"
    )
    assert api.patch(url, json={"name": "Renamed"}).json()["schedule"]["cron"] == "@hourly"
    cleared = api.patch(url, json={"schedule": None}).json()
    assert (cleared["schedule"], cleared["next_run_at"]) == (None, None)
    assert api.get(url).json()["schedule"] is None


def test_a_runs_trigger_says_what_started_it(api: ApiUser, db: Session) -> None:
    case_id, _ = new_case(api, queries=1)
    case = db.get(Case, case_id)
    assert case is not None
    sweep = Sweep(case_id=case_id, try_number=1)
    db.add(sweep)
    db.flush()
    by_hand = run_service.create_run(session=db, case=case)
    in_sweep = run_service.create_run(session=db, case=case, sweep_id=sweep.id)
    assert (by_hand.trigger, in_sweep.trigger) == ("user", "sweep")
    over_api = run_service.create_run(session=db, case=case, trigger="api")
    listed = {r["id"]: r["trigger"] for r in api.get(f"/api/v1/cases/{case_id}/runs").json()}
    assert listed == {by_hand.id: "user", in_sweep.id: "sweep", over_api.id: "api"}
