"""Alert rules: what triggers, what stays quiet (a drop within noise), and the payload."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.models import Alert, AlertEvent, Delivery, RunQuery
from app.schedules.evaluate import evaluate_run
from app.schedules.ticks import evaluate_missed
from app.vocabulary import RunStatus
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import add_run, new_case

BASE = "https://relevo.example.com"


def _alert(api: ApiUser, case_id: int, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/alerts", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def _evaluate(db: Session, run_id: int) -> list[dict[str, Any]]:
    evaluate_run(session=db, run_id=run_id, base_url=BASE, email_enabled=False)
    events = db.scalars(
        select(AlertEvent).where(AlertEvent.run_id == run_id).order_by(AlertEvent.id)
    )
    return [e.payload for e in events]


def test_a_drop_of_n_points_triggers_and_a_smaller_one_does_not(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=4)
    _alert(api, case_id, kind="drop", points=5)
    first = add_run(db, case_id, queries, [60, 60, 60, 60])
    small = add_run(db, case_id, queries, [58, 58, 58, 58])
    big = add_run(db, case_id, queries, [50, 50, 52, 54])
    assert _evaluate(db, first.id) == []
    assert _evaluate(db, small.id) == []
    (payload,) = _evaluate(db, big.id)
    assert payload["run"]["id"] == big.id and payload["run"]["score"] == 51.5
    assert payload["previous"] == {"id": small.id, "score": 58.0}
    assert payload["delta"] == -6.5
    assert payload["case"] == {"id": case_id, "name": "Movies", "url": f"{BASE}/cases/{case_id}"}
    assert [q["delta"] for q in payload["worst_queries"]] == [-8.0, -8.0, -6.0, -4.0]
    assert payload["worst_queries"][2]["text"] == "query 2"
    assert payload["event"] == "alert.triggered"
    assert "Movies" in payload["text"] and "6.50 points" in payload["text"]


def test_an_ended_run_is_evaluated_once(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=2)
    _alert(api, case_id, kind="below", threshold=50)
    run = add_run(db, case_id, queries, [10, 20])
    assert evaluate_run(session=db, run_id=run.id, base_url=BASE, email_enabled=False) == 1
    assert evaluate_run(session=db, run_id=run.id, base_url=BASE, email_enabled=False) == 0
    assert len(db.scalars(select(AlertEvent)).all()) == 1


def test_a_drop_within_noise_is_not_significant(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=20)
    _alert(api, case_id, kind="significant_drop", alpha=0.05)
    base = [50.0 + (i % 5) * 5 for i in range(20)]
    add_run(db, case_id, queries, base)
    # Half the queries up 12, half down 14: the mean falls a point, p is far from 0.05.
    noisy = [b + (12 if i % 2 else -14) for i, b in enumerate(base)]
    noisy_run = add_run(db, case_id, queries, noisy)
    assert _evaluate(db, noisy_run.id) == []
    # Every query down 3 to 5 points: a real drop.
    worse = [n - 3 - (i % 3) for i, n in enumerate(noisy)]
    worse_run = add_run(db, case_id, queries, worse)
    (payload,) = _evaluate(db, worse_run.id)
    assert payload["p"] is not None and payload["p"] < 0.001
    assert payload["previous"]["id"] == noisy_run.id
    assert len(payload["worst_queries"]) == 10
    assert [q["delta"] for q in payload["worst_queries"][:2]] == [-5.0, -5.0]


def test_drop_from_baseline_compares_with_the_baseline(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=2)
    baseline = add_run(db, case_id, queries, [80, 80])
    _alert(api, case_id, kind="drop_from_baseline", baseline_run_id=baseline.id, points=10)
    better = add_run(db, case_id, queries, [75, 75])  # 5 below: not yet
    worse = add_run(db, case_id, queries, [70, 68])  # 11 below the baseline, 6 below previous
    assert _evaluate(db, better.id) == []
    (payload,) = _evaluate(db, worse.id)
    assert payload["previous"] == {"id": baseline.id, "score": 80.0}
    assert payload["delta"] == -11.0


def test_failed_runs_and_error_shares(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=5)
    _alert(api, case_id, kind="run_failed", error_share=0.2)
    fine = add_run(db, case_id, queries, [50, 50, 50, 50, None], errors=1)  # 20%: not above
    many = add_run(db, case_id, queries, [50, 50, 50, None, None], errors=2)
    failed = add_run(db, case_id, queries, [None] * 5, status=RunStatus.FAILED, errors=5)
    assert _evaluate(db, fine.id) == []
    assert "2 of 5 queries errored" in _evaluate(db, many.id)[0]["alert"]["reason"]
    (payload,) = _evaluate(db, failed.id)
    assert payload["run"]["score"] is None and "failed" in payload["alert"]["reason"]


def test_alerts_api_validates_and_lists(api: ApiUser, other_api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=1)
    url = f"/api/v1/cases/{case_id}/alerts"
    assert api.post(url, json={"kind": "drop"}).status_code == 422  # no points
    assert api.post(url, json={"kind": "below"}).status_code == 422  # no threshold
    assert api.post(url, json={"kind": "drop_from_baseline"}).status_code == 422
    assert api.post(url, json={"kind": "sometimes"}).status_code == 422
    # A baseline run that the case does not have, whatever the kind (once a 500).
    stray = api.post(url, json={"kind": "drop", "points": 1, "baseline_run_id": 999})
    assert stray.status_code == 422 and "has no run 999" in stray.text
    assert (
        api.post(url, json={"kind": "below", "threshold": 5, "webhook_ids": [999]}).status_code
        == 422
    )
    assert (
        api.post(url, json={"kind": "below", "threshold": 5, "email": ["nope"]}).status_code == 422
    )
    alert = _alert(api, case_id, kind="below", threshold=40, email=["ops@example.com"])
    assert alert["alpha"] == 0.05 and alert["error_share"] == 0.2
    assert [a["id"] for a in api.get(url).json()] == [alert["id"]]
    patched = api.patch(f"{url}/{alert['id']}", json={"threshold": 30})
    assert patched.status_code == 200 and patched.json()["threshold"] == 30
    assert other_api.get(f"{url}/{alert['id']}").status_code == 404
    # No SMTP server: the e-mail is logged as failed, saying why.
    run = add_run(db, case_id, queries, [10])
    evaluate_run(session=db, run_id=run.id, base_url=BASE, email_enabled=False)
    (event,) = api.get(f"{url}/events").json()
    assert event["run_id"] == run.id
    (delivery,) = event["deliveries"]
    assert delivery["email"] == "ops@example.com" and delivery["status"] == "failed"
    assert "SMTP" in delivery["error"]
    assert api.delete(f"{url}/{alert['id']}").status_code == 204
    assert api.get(url).json() == []
    assert db.scalars(select(Delivery)).all() == []


@pytest.mark.parametrize("kind", ["drop", "significant_drop", "drop_from_baseline"])
def test_the_first_run_has_nothing_to_drop_from(api: ApiUser, db: Session, kind: str) -> None:
    case_id, queries = new_case(api, queries=1)
    first = add_run(db, case_id, queries, [10])
    extra: dict[str, Any] = {"points": 1}
    if kind == "drop_from_baseline":
        extra["baseline_run_id"] = first.id
    _alert(api, case_id, kind=kind, **extra)
    assert _evaluate(db, first.id) == []


def test_an_alert_on_a_metric_reads_that_metrics_scores(api: ApiUser, db: Session) -> None:
    case_id, queries = new_case(api, queries=2)
    url = f"/api/v1/cases/{case_id}/alerts"
    metric = api.get("/api/v1/scorers").json()
    ndcg = next(s["id"] for s in metric if s["name"] == "NDCG@10")
    refused = api.post(url, json={"kind": "below", "threshold": 50, "metric_scorer_id": ndcg})
    assert refused.status_code == 422
    assert (
        api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [ndcg]}).status_code == 200
    )
    _alert(api, case_id, kind="drop", points=10, metric_scorer_id=ndcg)
    first = add_run(db, case_id, queries, [50, 50])
    second = add_run(db, case_id, queries, [50, 50])  # the primary score holds...
    for run, metric_scores in ((first, [90, 70]), (second, [60, 70])):  # ...NDCG falls 15
        rows = db.scalars(
            select(RunQuery).where(RunQuery.run_id == run.id).order_by(RunQuery.position)
        )
        for row, value in zip(rows, metric_scores, strict=True):
            row.metric_scores = {str(ndcg): value}
        run.recorded_metrics = [
            {"scorer_id": ndcg, "name": "NDCG@10", "case_score": sum(metric_scores) / 2}
        ]
    db.commit()
    assert _evaluate(db, first.id) == []
    (payload,) = _evaluate(db, second.id)
    assert (payload["run"]["score"], payload["previous"]["score"], payload["delta"]) == (
        65.0,
        80.0,
        -15.0,
    )
    assert [q["delta"] for q in payload["worst_queries"]] == [-30.0]


def test_a_tick_evaluates_the_runs_the_hook_missed(
    api: ApiUser, db: Session, session_factory: sessionmaker[Session]
) -> None:
    case_id, queries = new_case(api, queries=1)
    rule = _alert(api, case_id, kind="run_failed")
    now = datetime.now(UTC)
    _made_at(db, rule["id"], now - timedelta(hours=1))
    missed = add_run(
        db,
        case_id,
        queries,
        [None],
        status=RunStatus.FAILED,
        finished_at=now - timedelta(minutes=5),
    )
    just_now = add_run(
        db,
        case_id,
        queries,
        [None],
        status=RunStatus.FAILED,
        finished_at=now - timedelta(seconds=5),
    )
    old = add_run(
        db, case_id, queries, [None], status=RunStatus.FAILED, finished_at=now - timedelta(days=3)
    )
    assert evaluate_missed(session_factory=session_factory, now=now) == [missed.id]
    assert evaluate_missed(session_factory=session_factory, now=now) == []
    events = {e.run_id for e in db.scalars(select(AlertEvent))}
    assert events == {missed.id} and just_now.id not in events and old.id not in events


def _made_at(db: Session, alert_id: int, moment: datetime) -> None:
    alert = db.get(Alert, alert_id)
    assert alert is not None
    alert.created_at = moment
    db.commit()


def test_a_rule_never_judges_a_run_that_ended_before_it_existed(
    api: ApiUser, db: Session, session_factory: sessionmaker[Session]
) -> None:
    """Issue 35: a rule made today fired on a run that ended before it, with that run's
    old numbers. Neither the tick nor an evaluation of the run applies it."""
    case_id, queries = new_case(api, queries=1)
    now = datetime.now(UTC)
    before = add_run(db, case_id, queries, [10], finished_at=now - timedelta(minutes=5))
    _alert(api, case_id, kind="below", threshold=50)
    assert evaluate_missed(session_factory=session_factory, now=now) == []
    assert _evaluate(db, before.id) == []
    # An older rule of the case still judges it, and only it fires.
    older = _alert(api, case_id, kind="run_failed")
    _made_at(db, older["id"], now - timedelta(hours=1))
    failed = add_run(
        db,
        case_id,
        queries,
        [None],
        status=RunStatus.FAILED,
        finished_at=now - timedelta(minutes=3),
    )
    assert evaluate_missed(session_factory=session_factory, now=now) == [failed.id]
    kinds = [e.payload["alert"]["kind"] for e in db.scalars(select(AlertEvent))]
    assert kinds == ["run_failed"]
