"""Annotations (manual and per new try) and the home dashboard."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.schemas import ScheduleBody
from app.models import Alert, AlertCheck, AlertEvent, Annotation, Case, Try
from app.schedules import service
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case
from tests.support.pages import attr, login, one
from tests.support.pages import soup as soup_of


def test_notes_at_a_time_on_a_run_and_after_each_new_try(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=1)
    url = f"/api/v1/cases/{case_id}/annotations"
    run = add_run(db, case_id, queries, [50], finished_at=datetime(2026, 5, 1, 12, tzinfo=UTC))
    on_run = api.post(url, json={"text": "deployed synonyms v3", "run_id": run.id})
    assert on_run.status_code == 201, on_run.text
    assert on_run.json()["at"].startswith("2026-05-01T12:00:00")
    at = api.post(url, json={"text": "index rebuilt", "at": "2026-04-01T08:00:00Z"}).json()
    assert api.post(url, json={"text": "x", "run_id": 10**6}).status_code == 422
    assert api.post(url, json={"text": ""}).status_code == 422
    api.patch(f"/api/v1/cases/{case_id}", json={"knobs": {"titleBoost": 20}})
    api.patch(f"/api/v1/cases/{case_id}", json={"knobs": {"titleBoost": 20}, "rows": 20})
    listed = api.get(url).json()
    assert [(a["text"], a["auto"]) for a in listed] == [
        ("index rebuilt", False),
        ("deployed synonyms v3", False),
        ("Try 2: titleBoost 10 → 20", True),
        ("Try 3: rows 10 → 20", True),
    ]
    assert len(api.get(url).json()) == 4  # listing again adds nothing
    auto_id = listed[2]["id"]
    assert api.delete(f"{url}/{auto_id}").status_code == 409
    edited = api.patch(f"{url}/{auto_id}", json={"text": "boost titles"}).json()
    assert edited["text"] == "boost titles" and edited["auto"] is True
    assert api.delete(f"{url}/{at['id']}").status_code == 204
    assert len(api.get(url).json()) == 3


def test_dashboard_puts_what_got_worse_first(api: ApiUser, db: Session) -> None:
    now = datetime.now(UTC)
    worse, wq = new_case(api, queries=1, name="Worse")
    better, bq = new_case(api, queries=1, name="Better")
    quiet, _ = new_case(api, name="Quiet")
    add_run(db, worse, wq, [90], finished_at=now - timedelta(days=10))  # before the week
    add_run(db, worse, wq, [80], finished_at=now - timedelta(days=3))
    latest = add_run(db, worse, wq, [60], finished_at=now - timedelta(hours=1))
    add_run(db, better, bq, [50], finished_at=now - timedelta(days=2))
    add_run(db, better, bq, [55], finished_at=now - timedelta(days=1))
    rule = Alert(case_id=worse, kind="drop", points=5)
    db.add_all([rule, Alert(case_id=better, kind="drop", points=5)])
    db.flush()
    db.add(AlertCheck(run_id=latest.id, triggered=True))
    db.add(AlertEvent(alert_id=rule.id, case_id=worse, run_id=latest.id, payload={}))
    case = db.get(Case, quiet)
    assert case is not None
    service.set_schedule(session=db, case=case, body=ScheduleBody(cron="@daily"))
    db.commit()
    cases = api.get("/api/v1/dashboard").json()["cases"]
    assert [c["name"] for c in cases] == ["Worse", "Better", "Quiet"]
    first, second, third = cases
    assert (first["score"], first["delta_7d"], first["sparkline"]) == (
        60.0,
        -20.0,
        [90.0, 80.0, 60.0],
    )
    assert (first["alert_state"], second["alert_state"], third["alert_state"]) == (
        "triggered",
        "ok",
        None,
    )
    assert second["delta_7d"] == 5.0
    assert third["score"] is None and third["delta_7d"] is None and third["next_run_at"] is not None
    assert first["next_run_at"] is None


def test_dashboard_page_lists_the_same_cases(api: ApiUser, client: TestClient, db: Session) -> None:
    case_id, queries = new_case(api, queries=1, name="Films <b>")
    add_run(db, case_id, queries, [42])
    login(client, api.email)
    page = client.get("/dashboard")
    assert page.status_code == 200
    soup = BeautifulSoup(page.text, "html.parser")
    rows = soup.select("#dashboard tbody tr")
    assert [r["data-case-id"] for r in rows] == [str(case_id)]
    assert one(rows[0], "a").get_text() == "Films <b>"
    assert attr(one(rows[0], ".badge"), "data-score") == "42.0"
    assert attr(one(soup, 'link[rel="alternate"]'), "href").endswith("/api/v1/dashboard")


def test_notes_are_marked_on_the_history_chart_and_runs_table(
    api: ApiUser, client: TestClient, db: Session
) -> None:
    case_id, queries = new_case(api, queries=1)
    early = add_run(db, case_id, queries, [40], finished_at=datetime(2026, 5, 1, tzinfo=UTC))
    later = add_run(db, case_id, queries, [60], finished_at=datetime(2026, 5, 3, tzinfo=UTC))
    url = f"/api/v1/cases/{case_id}/annotations"
    api.post(url, json={"text": "synonyms v3", "at": "2026-05-02T00:00:00Z"})
    api.post(url, json={"text": "first <run>", "run_id": early.id})
    api.post(url, json={"text": "not run yet", "at": "2026-06-01T00:00:00Z"})
    placed = {a["text"]: a["near_run_id"] for a in api.get(url).json()}
    assert placed == {"first <run>": early.id, "synonyms v3": later.id, "not run yet": None}
    login(client, api.email)
    page = soup_of(client.get(f"/cases/{case_id}/history", headers={"HX-Request": "true"}))
    markers = {
        attr(g, "data-run-id"): one(g, "title").get_text()
        for g in page.select("#case-history-chart g.note-marker")
    }
    assert markers == {str(early.id): "first <run>", str(later.id): "synonyms v3"}
    rows = {
        attr(tr, "data-run-id"): [n.get_text() for n in tr.select(".run-note")]
        for tr in page.select("#runs tbody tr")
    }
    assert rows == {str(early.id): ["first <run>"], str(later.id): ["synonyms v3"]}
    runs = api.get(f"/api/v1/cases/{case_id}/runs").json()
    assert {r["trigger"] for r in runs} == {"user"}


def test_a_time_out_of_range_in_utc_is_422(api: ApiUser) -> None:
    case_id, _ = new_case(api)
    url = f"/api/v1/cases/{case_id}/annotations"
    for at in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:00-14:00"):
        assert api.post(url, json={"text": "x", "at": at}).status_code == 422
    note = api.post(url, json={"text": "x", "at": "2026-01-01T12:00:00+02:00"}).json()
    assert note["at"].startswith("2026-01-01T10:00:00")


def test_the_home_page_loads_what_got_worse(api: ApiUser, client: TestClient, db: Session) -> None:
    now = datetime.now(UTC)
    worse, wq = new_case(api, queries=1, name="Worse")
    steady, sq = new_case(api, queries=1, name="Steady")
    add_run(db, worse, wq, [70], finished_at=now - timedelta(days=2))
    add_run(db, worse, wq, [64], finished_at=now - timedelta(days=1))
    add_run(db, steady, sq, [50], finished_at=now - timedelta(days=2))
    add_run(db, steady, sq, [51], finished_at=now - timedelta(days=1))
    login(client, api.email)
    home = soup_of(client.get("/"))
    assert attr(one(home, "#worse"), "hx-get").endswith("/dashboard")
    card = soup_of(client.get("/dashboard", headers={"HX-Request": "true"}))
    items = card.select("#worse li")
    assert [attr(li, "data-case-id") for li in items] == [str(worse)]
    assert one(items[0], ".delta-7d").get_text() == "-6.00 in 7 days"


def _migration_0019() -> ModuleType:
    path = Path(__file__).parents[2] / "migrations" / "versions" / "0019_try_annotations.py"
    spec = importlib.util.spec_from_file_location("migration_0019", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_try_is_annotated_when_made_and_older_ones_by_the_migration(
    api: ApiUser, db: Session
) -> None:
    case_id, _ = new_case(api, queries=1)
    api.patch(f"/api/v1/cases/{case_id}", json={"knobs": {"titleBoost": 20}})
    api.patch(f"/api/v1/cases/{case_id}", json={"knobs": {"titleBoost": 2.5}, "rows": 20})
    # Written with the try, not when the timeline is first read (a read writes nothing).
    made = db.scalars(
        select(Annotation).where(Annotation.case_id == case_id).order_by(Annotation.try_number)
    ).all()
    texts = [(a.try_number, a.text, a.auto) for a in made]
    assert texts == [
        (2, "Try 2: titleBoost 10 → 20", True),
        (3, "Try 3: titleBoost 20 → 2.5; rows 10 → 20", True),
    ]
    # Tries made before revision 0019 had none until their timeline was read: the
    # migration's backfill writes them, with the same text, at the try's time.
    for annotation in made:
        db.delete(annotation)
    db.flush()
    migration = _migration_0019()
    assert migration.backfill(db.connection()) == 2
    assert migration.backfill(db.connection()) == 0  # once only
    db.expire_all()
    again = db.scalars(
        select(Annotation).where(Annotation.case_id == case_id).order_by(Annotation.try_number)
    ).all()
    assert [(a.try_number, a.text, a.auto) for a in again] == texts
    tries = {t.number: t for t in db.scalars(select(Try).where(Try.case_id == case_id))}
    assert [a.at for a in again] == [tries[2].created_at, tries[3].created_at]
