"""Helpers for the click log tests: a log, UBI events, NDJSON bodies."""

from __future__ import annotations

import json
from typing import Any

from tests.fixtures.users import ApiUser


def make_log(api: ApiUser, **extra: Any) -> dict[str, Any]:
    response = api.post("/api/v1/click-logs", json={"name": "shop"} | extra)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def ndjson(records: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def send_events(api: ApiUser, log_id: int, events: list[dict[str, Any]]) -> None:
    response = api.post(
        f"/api/v1/click-logs/{log_id}/events",
        content=ndjson(events),
        headers={"content-type": "application/x-ndjson"},
    )
    assert response.status_code == 200 and response.json()["refused_count"] == 0, response.text


def ubi_event(query_id: str, text: str, doc: str, ordinal: int, action: str) -> dict[str, Any]:
    return {
        "action_name": action,
        "query_id": query_id,
        "timestamp": "2025-02-01T10:00:00Z",
        "user_query": text,
        "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": ordinal}},
    }
