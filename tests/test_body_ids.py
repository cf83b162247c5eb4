"""An id (or try number) in a body that no row can have is refused with a 422, never a 500.

Ids are 32-bit integers on PostgreSQL, which refuses a larger one (DataError) where SQLite
finds nothing, and SQLite cannot even bind one beyond 64 bits (OverflowError). (Team ids
answer 404, as for a team one is not in: tests/teams/test_team_sharing.py.)
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint

OUT_OF_RANGE = [0, -1, 2**31, 2**40, 2**70]


def _world(api: ApiUser) -> dict[str, Any]:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    case = make_case(api, endpoint["id"])
    queries = add_queries(api, case["id"], ["star wars"])
    book = api.post("/api/v1/books", json={"name": "B", "scale": [0, 1]}).json()
    judge = api.post(
        "/api/v1/judges",
        json={
            "name": "j",
            "provider": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "api_key": "sk-x",
        },
    ).json()
    return {
        "endpoint": endpoint["id"],
        "case": case["id"],
        "query": queries["star wars"],
        "book": book["id"],
        "judge": judge["id"],
    }


def _calls(w: dict[str, Any], bad: int) -> list[tuple[str, str, dict[str, Any]]]:
    case = {"name": "x", "search_endpoint_id": w["endpoint"], "query_template": "{}"}
    sync = f"/api/v1/cases/{w['case']}/books/{w['book']}/sync"
    return [
        ("PATCH", f"/api/v1/cases/{w['case']}/queries", {"query_ids": [bad], "weight": 2}),
        ("PATCH", f"/api/v1/cases/{w['case']}/queries", {"query_ids": [w["query"], bad]}),
        ("POST", "/api/v1/cases", {**case, "search_endpoint_id": bad}),
        ("POST", "/api/v1/cases", {**case, "scorer_id": bad}),
        ("POST", "/api/v1/cases", {**case, "metric_scorer_ids": [bad]}),
        ("PATCH", f"/api/v1/cases/{w['case']}", {"search_endpoint_id": bad}),
        ("PATCH", f"/api/v1/cases/{w['case']}", {"scorer_id": bad}),
        ("POST", f"/api/v1/cases/{w['case']}/runs", {"try_number": bad}),
        ("POST", "/api/v1/score", {"scorer_id": bad, "docs": ["a"], "ratings": {}}),
        ("POST", f"/api/v1/books/{w['book']}/populate", {"case_id": bad}),
        ("POST", sync, {"method": "rater", "user_id": bad}),
        ("POST", sync, {"method": "mean", "judges": "only", "judge_id": bad}),
        ("POST", f"/api/v1/judges/{w['judge']}/test", {"book_id": bad}),
        ("POST", f"/api/v1/books/{w['book']}/judge-runs", {"judge_id": bad}),
        ("POST", f"/api/v1/cases/{w['case']}/alerts", {"kind": "drop", "metric_scorer_id": bad}),
        ("POST", f"/api/v1/cases/{w['case']}/alerts", {"kind": "drop", "webhook_ids": [bad]}),
    ]  # fmt: skip


@pytest.mark.parametrize("bad", OUT_OF_RANGE)
def test_an_id_no_row_can_have_is_refused_in_every_body(api: ApiUser, bad: int) -> None:
    world = _world(api)
    answers = {
        (method, url, str(body)): getattr(api, method.lower())(url, json=body)
        for method, url, body in _calls(world, bad)
    }
    assert {key: r.status_code for key, r in answers.items()} == {key: 422 for key in answers}
    messages = {r.json()["detail"][0]["msg"] for r in answers.values()}
    assert messages <= {
        "Input should be greater than or equal to 1",
        "Input should be less than or equal to 2147483647",
    }
