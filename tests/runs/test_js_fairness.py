"""One user's runaway JavaScript scorers do not hold up another user's scoring."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.gate_engine import gate_engine

pytestmark = [pytest.mark.runner, pytest.mark.slow]

ENDED = {"finished", "failed", "cancelled", "interrupted"}


def _js_scorer(api: ApiUser, code: str) -> int:
    body = {"name": "loop", "kind": "javascript", "scale": [0, 1, 2, 3], "code": code}
    response = api.post("/api/v1/scorers", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _case(api: ApiUser, url: str, scorer: int, queries: int) -> int:
    endpoint = make_endpoint(api, url, timeout_s=30)
    case_id = int(make_case(api, endpoint["id"], scorer_id=scorer)["id"])
    add_queries(api, case_id, [f"query {n}" for n in range(queries)])
    return case_id


def _run(api: ApiUser, url: str) -> dict[str, Any]:
    run: dict[str, Any] = api.get(url).json()
    return run


def test_runaway_runs_of_one_user_leave_others_scoring(api: ApiUser, other_api: ApiUser) -> None:
    with gate_engine() as engine:
        engine.release()  # the engine answers at once: only scoring takes time
        loop = _js_scorer(api, "while (true) {}")
        runaway_case = _case(api, engine.index_url, loop, queries=3)
        urls = []
        for _ in range(6):
            started = api.post(f"/api/v1/cases/{runaway_case}/runs")
            assert started.status_code in (200, 201, 202), started.text
            urls.append(f"/api/v1/cases/{runaway_case}/runs/{started.json()['id']}")

        # The second user: a JavaScript score and a built-in run, both complete...
        score = other_api.post(
            "/api/v1/score",
            json={
                "scorer": {"name": "js", "kind": "javascript", "scale": [0, 1, 2, 3],
                           "code": "setScore(docRating(0) * 10)"},
                "docs": ["a", "b"],
                "ratings": {"a": 3},
            },
        )  # fmt: skip
        ndcg_case = _case(other_api, engine.index_url, scorer_id(other_api, "NDCG@10"), 2)
        run = other_api.post(f"/api/v1/cases/{ndcg_case}/runs?wait=true")
        # ...while the first user's runaways are still being worked through.
        still_going = [_run(api, url)["status"] not in ENDED for url in urls]

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and any(
            _run(api, url)["status"] not in ENDED for url in urls
        ):
            time.sleep(0.2)
        runaways = [_run(api, url) for url in urls]

    assert score.status_code == 200, score.text
    assert (score.json()["status"], score.json()["score"]) == ("scored", 30)
    assert run.status_code == 200, run.text
    assert run.json()["status"] == "finished"
    assert [q["status"] for q in run.json()["queries"]] == ["unscored", "unscored"]
    assert any(still_going)
    for runaway in runaways:
        assert runaway["status"] == "failed"  # every query errored (API.md)
        assert [(q["status"], q["error"]) for q in runaway["queries"]] == [
            ("error", "scorer exceeded its 1 s time limit")
        ] * 3
