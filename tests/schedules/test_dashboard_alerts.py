"""The dashboard keeps an alert until a later run clears it, shows the change since the run
before, and a latest run that failed as failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.schedules.evaluate import evaluate_run
from app.vocabulary import RunStatus
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case
from tests.support.pages import attr, login, one
from tests.support.pages import soup as soup_of


def _evaluated(db: Session, case_id: int, queries: list[int], scores: list[Any], **kw: Any) -> int:
    run = add_run(db, case_id, queries, scores, **kw)
    evaluate_run(session=db, run_id=run.id, base_url="http://relevo.test", email_enabled=False)
    return run.id


def _row(api: ApiUser, case_id: int) -> dict[str, Any]:
    cases: list[dict[str, Any]] = api.get("/api/v1/dashboard").json()["cases"]
    (row,) = [c for c in cases if c["id"] == case_id]
    return row


def _drop_case(api: ApiUser, db: Session) -> tuple[int, list[int], int]:
    """A case whose score rose over the week and fell 20 points on its latest run."""
    now = datetime.now(UTC)
    case_id, queries = new_case(api, queries=2, name="Films")
    body = {"kind": "drop", "points": 5}
    assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    _evaluated(db, case_id, queries, [40, 40], finished_at=now - timedelta(days=3))
    _evaluated(db, case_id, queries, [80, 80], finished_at=now - timedelta(hours=1))
    dropped = _evaluated(db, case_id, queries, [60, 60])
    return case_id, queries, dropped


def test_an_alert_stands_until_a_later_run_clears_it(api: ApiUser, db: Session) -> None:
    case_id, queries, dropped = _drop_case(api, db)
    row = _row(api, case_id)
    # The week's change hides the drop of the last run; the change since the run before shows it.
    assert (row["delta_7d"], row["delta_last_run"]) == (20.0, -20.0)
    assert row["alert_state"] == "triggered"
    alert = row["alert"]
    assert (alert["kind"], alert["run_id"]) == ("drop", dropped)
    assert alert["reason"].startswith("score fell 20.00 points from the previous run")
    # A run that failed cannot tell whether the score came back: the alert stands, and the
    # dashboard says the latest run failed instead of showing the old score as fine.
    _evaluated(db, case_id, queries, [None, None], status=RunStatus.FAILED)
    row = _row(api, case_id)
    assert (row["alert_state"], row["alert"]["run_id"], row["last_run_failed"]) == (
        "triggered",
        dropped,
        True,
    )
    assert row["score"] == 60.0
    # A finished run on which the rule fires nothing clears it.
    cleared = _evaluated(db, case_id, queries, [61, 61])
    row = _row(api, case_id)
    assert (row["alert_state"], row["alert"], row["last_run_failed"]) == ("ok", None, False)
    assert (row["score"], row["delta_last_run"]) == (61.0, 1.0)
    assert cleared > dropped


def test_a_run_whose_every_query_errored_shows_as_failed(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=2, name="Errors")
    add_run(db, case_id, queries, [50, 70])
    add_run(db, case_id, queries, [None, None], errors=2)
    row = _row(api, case_id)
    assert (row["last_run_failed"], row["score"], row["alert_state"]) == (True, 60.0, None)


def test_the_dashboard_page_shows_the_standing_alert_and_the_last_change(
    api: ApiUser, client: TestClient, db: Session
) -> None:
    case_id, queries, dropped = _drop_case(api, db)
    login(client, api.email)
    page = soup_of(client.get("/dashboard"))
    row = one(page, f'#dashboard tr[data-case-id="{case_id}"]')
    assert "alert-triggered" in (row.get("class") or [])
    assert attr(one(row, ".delta-last-run"), "data-delta") == "-20.0"
    assert one(row, ".delta-last-run").get_text(strip=True) == "-20.00"
    assert one(row, ".delta-7d").get_text(strip=True) == "+20.00"
    cell = one(row, ".alert-state")
    assert one(cell, "strong").get_text() == "Drop"
    assert one(cell, ".alert-reason").get_text().startswith("score fell 20.00 points")
    assert f"run {dropped}" in cell.get_text()
    # The home page's card lists it although its week went up.
    card = soup_of(client.get("/dashboard", headers={"HX-Request": "true"}))
    (item,) = card.select("#worse li")
    assert attr(item, "data-case-id") == str(case_id)
    assert one(item, ".alert-state").get_text().startswith("alert: score fell 20.00 points")
    add_run(db, case_id, queries, [None, None], status=RunStatus.FAILED)
    row = one(soup_of(client.get("/dashboard")), f'#dashboard tr[data-case-id="{case_id}"]')
    assert one(row, ".case-score .last-run-failed").get_text() == "Last run failed"
    assert one(row, ".case-score .earlier-score").get_text() == "(before: 60.00)"
