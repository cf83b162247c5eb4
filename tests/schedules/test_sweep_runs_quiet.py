"""A knob sweep's combinations are not the case's runs: none fires an alert (by the runner's
hook or the tick's catch-up), none is the run a later one is compared with, and none shows on
the dashboard (score, sparkline, deltas, failure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from app.models import Alert, AlertEvent, Run, Sweep
from app.schedules.evaluate import evaluate_run
from app.schedules.ticks import evaluate_missed
from app.vocabulary import RunStatus
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case

BASE = "https://relevo.example.com"


def _in_sweep(db: Session, case_id: int, *runs: Run) -> None:
    sweep = Sweep(case_id=case_id, try_number=1)
    db.add(sweep)
    db.flush()
    for run in runs:
        run.sweep_id = sweep.id
    db.commit()


def _alert(api: ApiUser, case_id: int, **body: Any) -> None:
    response = api.post(f"/api/v1/cases/{case_id}/alerts", json=body)
    assert response.status_code == 201, response.text


def _dashboard_row(api: ApiUser, case_id: int) -> dict[str, Any]:
    rows = api.get("/api/v1/dashboard").json()["cases"]
    found: dict[str, Any] = next(r for r in rows if r["id"] == case_id)
    return found


def test_a_sweep_run_fires_no_alert_and_is_no_baseline(
    api: ApiUser, db: Session, session_factory: sessionmaker[Session]
) -> None:
    case_id, queries = new_case(api, queries=2)
    _alert(api, case_id, kind="drop", points=5)
    _alert(api, case_id, kind="below", threshold=50)
    _alert(api, case_id, kind="run_failed")
    now = datetime.now(UTC)
    # The rules are older than the runs (a rule never judges a run that ended before it).
    db.execute(
        update(Alert).where(Alert.case_id == case_id).values(created_at=now - timedelta(hours=1))
    )
    db.commit()
    own = add_run(db, case_id, queries, [70, 70], finished_at=now - timedelta(minutes=9))
    poor = add_run(db, case_id, queries, [10, 20], finished_at=now - timedelta(minutes=8))
    broken = add_run(
        db,
        case_id,
        queries,
        [None, None],
        status=RunStatus.FAILED,
        errors=2,
        finished_at=now - timedelta(minutes=7),
    )
    _in_sweep(db, case_id, poor, broken)
    # The hook and the tick's catch-up both pass the combinations by.
    for run in (poor, broken):
        assert evaluate_run(session=db, run_id=run.id, base_url=BASE, email_enabled=False) == 0
    assert evaluate_missed(session_factory=session_factory, now=now) == [own.id]
    assert list(db.scalars(select(AlertEvent))) == []
    # The case's next run drops 6 points from its own run, not 56 from the poor combination
    # (nor from nothing after the broken one): the drop rule names its own previous run.
    later = add_run(db, case_id, queries, [64, 64])
    assert evaluate_run(session=db, run_id=later.id, base_url=BASE, email_enabled=False) == 1
    (event,) = db.scalars(select(AlertEvent).where(AlertEvent.run_id == later.id))
    assert event.payload["previous"] == {"id": own.id, "score": 70.0}
    assert event.payload["delta"] == -6.0


def test_a_sweep_run_never_shows_on_the_dashboard(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=2)
    _alert(api, case_id, kind="run_failed")
    add_run(db, case_id, queries, [40, 50])
    own = add_run(db, case_id, queries, [60, 70])
    high = add_run(db, case_id, queries, [99, 97])
    broken = add_run(db, case_id, queries, [None, None], status=RunStatus.FAILED, errors=2)
    _in_sweep(db, case_id, high, broken)
    row = _dashboard_row(api, case_id)
    assert row["score"] == 65.0 and row["sparkline"] == [45.0, 65.0]
    assert row["delta_last_run"] == 20.0
    assert row["last_run_failed"] is False and row["alert_state"] == "ok"
    ended = own.finished_at
    assert ended is not None and row["last_run_at"] is not None
    at = datetime.fromisoformat(row["last_run_at"])
    assert at == (ended if ended.tzinfo else ended.replace(tzinfo=UTC))
