"""UBI 1.3.0 ingest over the API: one record, arrays, NDJSON; duplicates; refusals by line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.clicks import make_log, ndjson

QUERY = {
    "application": "shop",
    "query_id": "q-1",
    "client_id": "c-1",
    "user_query": "red shoes",
    "query_attributes": {},
    "timestamp": "2025-01-24T07:31:30.699+0000",
    "query_response_hit_ids": ["d1", "d2", "d3"],
}


def event(doc: str, ordinal: int, action: str = "impression", **extra: Any) -> dict[str, Any]:
    return {
        "application": "shop",
        "action_name": action,
        "query_id": "q-1",
        "client_id": "c-1",
        "timestamp": "2025-01-24T07:31:31Z",
        "user_query": "red shoes",
        "message_type": None,
        "message": None,
        "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": ordinal}},
        **extra,
    }


def test_create_read_update_delete(api: ApiUser, other_api: ApiUser) -> None:
    log = make_log(api)
    assert log["position_base"] == 1 and log["team_ids"] == []
    assert [x["id"] for x in api.get("/api/v1/click-logs").json()] == [log["id"]]
    assert other_api.get(f"/api/v1/click-logs/{log['id']}").status_code == 404
    assert other_api.post(f"/api/v1/click-logs/{log['id']}/events", json=[]).status_code == 404
    changed = api.patch(f"/api/v1/click-logs/{log['id']}", json={"position_base": 0}).json()
    assert changed["position_base"] == 0 and changed["name"] == "shop"
    assert api.post("/api/v1/click-logs", json={"name": "x", "position_base": 2}).status_code == 422
    assert api.delete(f"/api/v1/click-logs/{log['id']}").status_code == 204
    assert api.get(f"/api/v1/click-logs/{log['id']}").status_code == 404


def test_one_record_an_array_and_ndjson_are_stored_once(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    url = f"/api/v1/click-logs/{log_id}"
    assert api.post(f"{url}/queries", json=QUERY).json() == {
        "stored": 1,
        "duplicates": 0,
        "refused_count": 0,
        "refused": [],
    }
    # The same query_id again (even with other fields) is the same query.
    again = api.post(f"{url}/queries", json=[QUERY, {**QUERY, "user_query": "other"}]).json()
    assert (again["stored"], again["duplicates"]) == (0, 2)
    events = [event("d1", 1), event("d2", 2), event("d1", 1, "click")]
    assert api.post(f"{url}/events", json=events).json()["stored"] == 3
    body = ndjson([*events, event("d3", 3)])
    sent = api.post(
        f"{url}/events", content=body, headers={"content-type": "application/x-ndjson"}
    ).json()
    assert (sent["stored"], sent["duplicates"]) == (1, 3)
    summary = api.get(f"{url}/summary").json()
    assert summary["queries"] == 1 and summary["events"] == 4
    assert summary["by_action"] == {"click": 1, "impression": 3}
    assert summary["distinct_queries"] == 1 and summary["impressions"] == "events"
    assert summary["first_at"].startswith("2025-01-24T07:31:30.699")
    assert summary["last_at"].startswith("2025-01-24T07:31:31")


def test_bad_records_are_refused_by_line_and_good_ones_kept(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    lines = [
        json.dumps(event("d1", 1)),
        '{"index": {"_index": "ubi_events"}}',
        json.dumps({"action_name": "click"}),
        "{not json",
        json.dumps(event("d2", 0)),
        json.dumps({**event("d2", 2), "timestamp": "yesterday"}),
        json.dumps({**event("d2", 2), "event_attributes": {"object": {}, "position": {}}}),
        "",
        json.dumps(event("d4", 4, timestamp=1717527762025)),
        json.dumps([1]),
        json.dumps({**event("d5", 5), "action_name": 7}),
        json.dumps({**event("d5", 5), "event_attributes": {"position": {"xy": {"x": 1, "y": 2}}}}),
    ]
    result = api.post(
        f"/api/v1/click-logs/{log_id}/events",
        content="\n".join(lines),
        headers={"content-type": "application/x-ndjson"},
    ).json()
    assert result["stored"] == 3 and result["refused_count"] == 7
    assert result["refused"] == [
        {"line": 3, "message": "required field timestamp is missing"},
        {"line": 4, "message": "not a JSON value"},
        {"line": 5, "message": "ordinal 0 is below this log's position_base 1"},
        {"line": 6, "message": "timestamp 'yesterday' is not ISO 8601"},
        {"line": 7, "message": "event_attributes.object needs object_id"},
        {"line": 10, "message": "a record must be a JSON object"},
        {"line": 11, "message": "action_name must be a string"},
    ]
    summary = api.get(f"/api/v1/click-logs/{log_id}/summary").json()
    # Epoch milliseconds 1717527762025 are 2024-06-04T19:02:42.025Z.
    assert summary["first_at"].startswith("2024-06-04T19:02:42.025")


def test_zero_based_ordinals_become_ranks_from_one(api: ApiUser, db: Any) -> None:
    from sqlalchemy import select

    from app.models import UbiEvent

    log_id = make_log(api, position_base=0)["id"]
    sent = api.post(f"/api/v1/click-logs/{log_id}/events", json=[event("d1", 0), event("d2", 4)])
    assert sent.json()["stored"] == 2
    ranks = db.scalars(
        select(UbiEvent.rank).where(UbiEvent.click_log_id == log_id).order_by(UbiEvent.rank)
    ).all()
    assert ranks == [1, 5]


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("queries", {"query_id": "x"}, "required field user_query is missing"),
        ("queries", {**QUERY, "query_response_hit_ids": [1]}, "must be an array of strings"),
        ("queries", {**QUERY, "client_id": "c" * 101}, "longer than 100 characters"),
        ("events", {**event("d", 1), "timestamp": True}, "ISO 8601 text or epoch"),
        ("events", {**event("d", 1), "timestamp": -5}, "out of range"),
        ("events", {**event("d", 1), "timestamp": "0001-01-01T00:00:00+01:00"}, "not ISO 8601"),
        ("events", {**event("d", 1), "user_query": "a\x00b"}, "NUL character"),
        ("events", event("d", 2**40), "beyond 1000000"),
        ("queries", {**QUERY, "query_response_hit_ids": ["a\x00"]}, "NUL character"),
    ],
)
def test_schema_rules(api: ApiUser, path: str, body: dict[str, Any], message: str) -> None:
    log_id = make_log(api)["id"]
    result = api.post(f"/api/v1/click-logs/{log_id}/{path}", json=body).json()
    assert result["stored"] == 0 and message in result["refused"][0]["message"]


def test_a_body_that_is_not_json_is_422(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    response = api.post(
        f"/api/v1/click-logs/{log_id}/events",
        content="{nope",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422 and "not JSON" in str(response.json()["detail"])


def test_hit_ids_count_as_impressions_when_there_are_no_impression_events(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    empty = {**QUERY, "query_id": "q-2", "query_response_hit_ids": []}
    assert api.post(f"/api/v1/click-logs/{log_id}/queries", json=[empty]).json()["stored"] == 1
    assert api.get(f"/api/v1/click-logs/{log_id}/summary").json()["impressions"] == "none"
    assert api.post(f"/api/v1/click-logs/{log_id}/queries", json=QUERY).json()["stored"] == 1
    assert api.get(f"/api/v1/click-logs/{log_id}/summary").json()["impressions"] == "hit_ids"
