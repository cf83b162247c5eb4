"""An id (or try number) in a body that no row can have is missing, never a 500.

Ids are 32-bit integers on PostgreSQL, which refuses a larger one (DataError) where SQLite
finds nothing, and SQLite cannot even bind one beyond 64 bits (OverflowError). Such an id
answers as a missing one does: 404 naming it (422 where the body bounds it already; team ids
too: tests/teams/test_team_sharing.py); a book synced from an unknown rater syncs nothing, and
from an unknown judge is the 404 of a judge one may not see.
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


def _missing(w: dict[str, Any], bad: int) -> list[tuple[str, str, dict[str, Any]]]:
    case = {"name": "x", "search_endpoint_id": w["endpoint"], "query_template": "{}"}
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
        ("POST", f"/api/v1/judges/{w['judge']}/test", {"book_id": bad}),
        ("POST", f"/api/v1/books/{w['book']}/judge-runs", {"judge_id": bad}),
        ("POST", f"/api/v1/cases/{w['case']}/alerts", {"kind": "drop", "metric_scorer_id": bad}),
        ("POST", f"/api/v1/cases/{w['case']}/alerts", {"kind": "drop", "webhook_ids": [bad]}),
    ]


@pytest.mark.parametrize("bad", OUT_OF_RANGE)
def test_an_id_no_row_can_have_is_missing_in_every_body(api: ApiUser, bad: int) -> None:
    world = _world(api)
    answers = {
        (method, url, str(body)): getattr(api, method.lower())(url, json=body)
        for method, url, body in _missing(world, bad)
    }
    # Missing (404), or refused by the body's own bounds (422: a try number below 1).
    wrong = {key: r.status_code for key, r in answers.items() if r.status_code not in (404, 422)}
    assert wrong == {}
    patched = answers[
        ("PATCH", f"/api/v1/cases/{world['case']}/queries", str({"query_ids": [bad], "weight": 2}))
    ]
    assert patched.json()["detail"] == f"Case {world['case']} has no query {bad}."
    sync = f"/api/v1/cases/{world['case']}/books/{world['book']}/sync"
    # An unknown rater is a 404 (as an unknown clicks rater is), and so is an unknown judge,
    # like another user's judge.
    synced = api.post(sync, json={"method": "rater", "user_id": bad})
    assert (synced.status_code, synced.json()) == (404, {"detail": "No such rater in this book."})
    judged = api.post(sync, json={"method": "rater", "judge_id": bad})
    assert (judged.status_code, judged.json()) == (404, {"detail": "No such judge."})
