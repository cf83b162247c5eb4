"""Knob sweeps against a real engine: each combination is an ordinary run of the case."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.db import session_scope
from tests.fixtures.users import ApiUser
from tests.support.sweeps import QUERIES as QUERIES
from tests.support.sweeps import TEMPLATE as TEMPLATE
from tests.support.sweeps import rated_case as rated_case

pytestmark = pytest.mark.runner  # starts runs (and sweeps)

# Title matches; comedies lifted by g, title weight t: both knobs change the ranking.


def _sweep(api: ApiUser, case_id: int, knobs: dict[str, Any], wait: bool = True) -> Any:
    suffix = "?wait=true" if wait else ""
    return api.post(f"/api/v1/cases/{case_id}/sweeps{suffix}", json={"knobs": knobs})


def test_a_sweep_runs_every_combination_as_a_normal_run(
    api: ApiUser, rated_case: dict[str, Any]
) -> None:
    case_id = rated_case["id"]
    response = _sweep(api, case_id, {"g": [0, 50], "t": [1, 3]})
    assert response.status_code == 200, response.text
    sweep = response.json()
    assert sweep["status"] == "finished" and sweep["total"] == sweep["done"] == 4
    combos = [r["knobs"] for r in sweep["results"]]
    assert combos == [{"t": 1, "g": 0}, {"t": 3, "g": 0}, {"t": 1, "g": 50}, {"t": 3, "g": 50}]
    assert all(r["status"] == "finished" for r in sweep["results"])
    scores = [r["case_score"] for r in sweep["results"]]
    assert len(set(scores)) > 1  # the knobs matter
    best = max(sweep["results"], key=lambda r: r["case_score"])
    assert sweep["best"] == best
    runs = {r["id"]: r for r in api.get(f"/api/v1/cases/{case_id}/runs").json()}
    for result in sweep["results"]:
        assert runs[result["run_id"]]["knobs"] == result["knobs"]
        assert runs[result["run_id"]]["sweep_id"] == sweep["id"]
    # The sweep did not touch the case.
    case = api.get(f"/api/v1/cases/{case_id}").json()
    assert case["knobs"] == {"t": 1, "g": 0} and case["try_number"] == rated_case["try_number"]
    assert api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep['id']}").json() == sweep

    # A normal run with the same knobs gives the same result.
    chosen = sweep["results"][3]
    patched = api.patch(f"/api/v1/cases/{case_id}", json={"knobs": chosen["knobs"]})
    assert patched.status_code == 200
    normal = api.post(f"/api/v1/cases/{case_id}/runs?wait=true").json()
    swept = api.get(f"/api/v1/cases/{case_id}/runs/{chosen['run_id']}").json()
    assert normal["case_score"] == swept["case_score"] == chosen["case_score"]
    assert normal["knobs"] is None

    def ranking(run: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(q["text"], q["score"], [d["id"] for d in q["docs"]]) for q in run["queries"]]

    assert ranking(normal) == ranking(swept)


def test_apply_sets_the_case_knobs_in_a_new_try(api: ApiUser, rated_case: dict[str, Any]) -> None:
    case_id = rated_case["id"]
    sweep = _sweep(api, case_id, {"g": [7, 9]}).json()
    chosen = sweep["results"][1]
    path = f"/api/v1/cases/{case_id}/sweeps/{sweep['id']}/apply"
    applied = api.post(path, json={"run_id": chosen["run_id"]})
    assert applied.status_code == 200, applied.text
    assert applied.json()["knobs"] == {"t": 1, "g": 9}
    assert applied.json()["try_number"] == rated_case["try_number"] + 1
    other = api.post(path, json={"run_id": 10**6})
    assert other.status_code == 404


def test_bad_sweeps_are_refused(api: ApiUser, rated_case: dict[str, Any]) -> None:
    case_id = rated_case["id"]
    unknown = _sweep(api, case_id, {"g": [1], "boost": [1, 2]})
    assert unknown.status_code == 422
    assert "'boost'" in unknown.json()["detail"][0]["msg"]
    assert unknown.json()["detail"][0]["loc"] == ["body", "knobs", "boost"]
    too_many = _sweep(api, case_id, {"g": list(range(11)), "t": list(range(10))})
    assert too_many.status_code == 422
    assert "110 combinations" in too_many.json()["detail"][0]["msg"]
    for values in (["x"], ["5"], [True], [None], []):
        response = _sweep(api, case_id, {"g": values})
        assert response.status_code == 422, values
    assert _sweep(api, case_id, {}).status_code == 422
    assert api.get(f"/api/v1/cases/{case_id}/sweeps/999999").status_code == 404
    runs = api.get(f"/api/v1/cases/{case_id}/runs").json()
    assert all(r["sweep_id"] is None for r in runs)  # nothing was started


def test_cancel_stops_a_sweep(api: ApiUser, rated_case: dict[str, Any]) -> None:
    case_id = rated_case["id"]
    started = _sweep(api, case_id, {"g": list(range(10)), "t": [1, 2]}, wait=False)
    assert started.status_code == 202
    sweep_id = started.json()["id"]
    cancelled = api.post(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    for _ in range(200):
        sweep = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}").json()
        if sweep["done"] == len(sweep["results"]):
            break
        time.sleep(0.05)
    assert sweep["status"] == "cancelled"
    assert len(sweep["results"]) < 20


def test_sweeps_left_running_by_a_stop_are_failed(
    api: ApiUser, rated_case: dict[str, Any], session_factory: Any
) -> None:
    from app.models import Sweep
    from app.sweeps.service import fail_interrupted_sweeps

    with session_scope(session_factory) as session:
        left = Sweep(case_id=rated_case["id"], try_number=1, status="running", grid={"g": [1]})
        done = Sweep(case_id=rated_case["id"], try_number=1, status="finished", grid={"g": [2]})
        session.add_all([left, done])
        session.commit()
        assert fail_interrupted_sweeps(session=session) == 1
        session.refresh(left)
        session.refresh(done)
        assert (left.status, done.status) == ("failed", "finished")
        assert "Interrupted" in (left.error or "")
