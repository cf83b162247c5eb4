"""One change, one basis (issue 35): the case page's metric tile, the dashboard's "since the
run before", the alerts and compare's case-level delta are the same number, between the
current run and the previous case run (never a draft or a sweep combination), both
re-scored with today's ratings, weights and aggregate."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.models import AlertEvent, Run
from app.schedules.evaluate import evaluate_run
from tests.fixtures.users import ApiUser
from tests.support.books import add_pairs, judge, make_book
from tests.support.pages import add_queries, doc, finished_run, movies_case, scorer_id

BASE = "http://relevo.test"
STAR, BAT = "star wars", "batman"


def _case(api: ApiUser, **extra: Any) -> tuple[int, dict[str, int], int]:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg, **extra)
    return case_id, add_queries(api, case_id, [STAR, BAT]), ndcg


def _rankings(ids: dict[str, int], batman: list[str]) -> dict[int, dict[str, Any]]:
    return {
        ids[STAR]: {"docs": [doc("1", "A New Hope", 1), doc("2", "Empire", 2)]},
        ids[BAT]: {"docs": [doc(d, f"Batman {d}", i + 1) for i, d in enumerate(batman)]},
    }


def _rate(api: ApiUser, case_id: int, query_id: int, ratings: dict[str, int]) -> None:
    body = {"ratings": [{"doc_id": k, "rating": v} for k, v in ratings.items()]}
    put = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
    assert put.status_code == 200, put.text


def _rescore(api: ApiUser, case_id: int, run_id: int) -> None:
    response = api.post(f"/api/v1/cases/{case_id}/runs/{run_id}/rescore")
    assert response.status_code == 200, response.text


def _compare(api: ApiUser, case_id: int, base: int, other: int) -> dict[str, Any]:
    got = api.get(f"/api/v1/cases/{case_id}/runs/compare", params={"base": base, "other": other})
    assert got.status_code == 200, got.text
    result: dict[str, Any] = got.json()
    return result


def _tile(api: ApiUser, case_id: int) -> dict[str, Any]:
    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    tile: dict[str, Any] = twin["metrics"]["metrics"][0]
    return tile


def _dashboard(api: ApiUser, case_id: int) -> dict[str, Any]:
    (row,) = [c for c in api.get("/api/v1/dashboard").json()["cases"] if c["id"] == case_id]
    result: dict[str, Any] = row
    return result


def _events(db: Session, run_id: int) -> list[dict[str, Any]]:
    evaluate_run(session=db, run_id=run_id, base_url=BASE, email_enabled=False)
    events = db.scalars(select(AlertEvent).where(AlertEvent.run_id == run_id))
    return [e.payload for e in events]


def _draft(factory: sessionmaker[Session], case_id: int, ids: dict[str, int], ndcg: int) -> int:
    """A draft (an agent's proposed try) that scored far better than the case: not the
    case's run, so never the "previous run" of a change."""
    draft = finished_run(factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg, case_score=99)
    with factory() as session:
        run = session.get(Run, draft)
        assert run is not None
        run.query_template = '{"q": "#$query##"}'
        run.recorded_metrics = [
            {"scorer_id": ndcg, "name": "NDCG@10", "case_score": 99.0, "scored": 2}
        ]
        session.commit()
    return draft


def test_tile_dashboard_and_compare_agree_after_a_rating_rescored_only_the_latest(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids, ndcg = _case(api)
    _rate(api, case_id, ids[STAR], {"1": 3, "2": 1})
    _rate(api, case_id, ids[BAT], {"4": 3, "5": 0})
    first = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    _rescore(api, case_id, first)
    draft = _draft(session_factory, case_id, ids, ndcg)
    latest = finished_run(session_factory, case_id, _rankings(ids, ["5", "4"]), scorer=ndcg)
    _rescore(api, case_id, latest)
    # A rating (like a book sync) re-scores the latest run in place, not the one before.
    _rate(api, case_id, ids[BAT], {"4": 3, "5": 2})
    compared = _compare(api, case_id, first, latest)
    expected = round(compared["case_score_delta"], 4)
    assert expected < -1.0  # batman's best doc fell to second
    tile = _tile(api, case_id)
    assert round(tile["change"], 4) == expected
    assert round(tile["previous"], 4) == round(compared["base"]["case_score"], 4)
    row = _dashboard(api, case_id)
    assert (row["delta_last_run"], row["delta_7d"]) == (expected, expected)
    assert tile["previous_run_id"] == first
    # Nor is the draft a point of the case's sparkline.
    assert [p["run_id"] for p in tile["history"]] == [first, latest] and draft > first


def test_same_rankings_under_new_ratings_is_no_change(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids, ndcg = _case(api)
    _rate(api, case_id, ids[STAR], {"1": 3})
    _rate(api, case_id, ids[BAT], {"4": 3})
    first = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    latest = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    for run_id in (first, latest):
        _rescore(api, case_id, run_id)
    _rate(api, case_id, ids[BAT], {"4": 1, "5": 3})
    assert _compare(api, case_id, first, latest)["case_score_delta"] == 0.0
    assert _tile(api, case_id)["change"] == 0.0
    assert _dashboard(api, case_id)["delta_last_run"] == 0.0


def test_switching_the_aggregate_between_runs_is_no_drop(
    api: ApiUser, db: Session, session_factory: sessionmaker[Session]
) -> None:
    """Recorded at finish, run 1 was a plain mean and run 2 a weighted one; re-scored alike,
    the two runs (the same rankings) are equal: no alert, no change anywhere."""
    case_id, ids, ndcg = _case(api)
    _rate(api, case_id, ids[STAR], {"1": 3})
    _rate(api, case_id, ids[BAT], {"5": 3})
    weight = api.patch(f"/api/v1/cases/{case_id}/queries/{ids[BAT]}", json={"weight": 50})
    assert weight.status_code == 200, weight.text
    for body in ({"kind": "drop", "points": 1}, {"kind": "below", "threshold": 70}):
        assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    first = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    _rescore(api, case_id, first)
    plain = api.get(f"/api/v1/cases/{case_id}/runs/{first}").json()["case_score"]
    _set_recorded(session_factory, first, plain)
    assert api.patch(f"/api/v1/cases/{case_id}", json={"aggregate": "weighted_mean"}).is_success
    latest = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    _rescore(api, case_id, latest)
    badge = api.get(f"/api/v1/cases/{case_id}/runs/{latest}").json()["case_score"]
    _set_recorded(session_factory, latest, badge)
    assert badge < 70 < plain  # batman (weight 50) found its doc second
    (below,) = _events(db, latest)
    # The threshold reads the badge's number (the weighted mean), not the plain one.
    assert below["alert"]["kind"] == "below"
    assert below["alert"]["reason"] == f"score {badge:.2f} is below 70"
    assert below["run"]["score"] == badge
    assert below["scores"] == {"basis": "rescored", "aggregate": "weighted_mean"}
    assert below["previous"] == {"id": first, "score": badge} and below["delta"] == 0.0
    assert _compare(api, case_id, first, latest)["case_score_delta"] == 0.0
    assert _dashboard(api, case_id)["delta_last_run"] == 0.0
    assert _tile(api, case_id)["change"] == 0.0


def test_a_drop_from_the_baseline_is_the_number_compare_gives(
    api: ApiUser, db: Session, session_factory: sessionmaker[Session]
) -> None:
    case_id, ids, ndcg = _case(api)
    _rate(api, case_id, ids[STAR], {"1": 3})
    _rate(api, case_id, ids[BAT], {"4": 3})
    baseline = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    _rescore(api, case_id, baseline)
    # Recorded with ratings since changed: the baseline scored 20 when it finished.
    _set_recorded(session_factory, baseline, 20.0)
    body = {"kind": "drop_from_baseline", "points": 1, "baseline_run_id": baseline}
    assert api.post(f"/api/v1/cases/{case_id}/alerts", json=body).status_code == 201
    latest = finished_run(session_factory, case_id, _rankings(ids, ["5", "4"]), scorer=ndcg)
    _rescore(api, case_id, latest)
    delta = _compare(api, case_id, baseline, latest)["case_score_delta"]
    assert delta < -1.0
    (event,) = _events(db, latest)
    assert event["alert"]["reason"] == (
        f"score fell {-delta:.2f} points from the baseline (run {baseline})"
    )
    assert event["delta"] == round(delta, 4) and event["previous"]["id"] == baseline


def _set_recorded(factory: sessionmaker[Session], run_id: int, score: float) -> None:
    with factory() as session:
        run = session.get(Run, run_id)
        assert run is not None
        run.recorded_score = score
        session.commit()


def test_a_book_sync_is_no_change_of_the_ranking(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    """A sync re-scores only the latest run in place: the run before, re-scored the same
    way, moves with it, so the same rankings show no change (the dashboard said +10)."""
    case_id, ids, ndcg = _case(api)
    _rate(api, case_id, ids[STAR], {"1": 3})
    _rate(api, case_id, ids[BAT], {"5": 3})
    first = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    latest = finished_run(session_factory, case_id, _rankings(ids, ["4", "5"]), scorer=ndcg)
    for run_id in (first, latest):
        _rescore(api, case_id, run_id)
        # What each recorded when it finished, with the ratings of then.
        score = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()["case_score"]
        _set_recorded(session_factory, run_id, score)
    before = api.get(f"/api/v1/cases/{case_id}/runs/{latest}").json()["case_score"]
    book = make_book(api)
    pairs = add_pairs(api, book["id"], [(BAT, "4")])
    assert judge(api, book["id"], pairs[(BAT, "4")], 3).status_code == 200
    synced = api.post(f"/api/v1/cases/{case_id}/books/{book['id']}/sync", json={"method": "mean"})
    assert synced.status_code == 200, synced.text
    assert synced.json()["ratings_set"] == 1
    after = api.get(f"/api/v1/cases/{case_id}/runs/{latest}").json()["case_score"]
    assert after > before + 5  # batman's first doc is now rated too
    assert _compare(api, case_id, first, latest)["case_score_delta"] == 0.0
    assert _tile(api, case_id)["change"] == 0.0
    assert _dashboard(api, case_id)["delta_last_run"] == 0.0
