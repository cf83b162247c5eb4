"""Pulling a UBI plugin's indexes from the embedded engine: paged, resumable, idempotent."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.outbound.policy import OutboundPolicy, current_policy, install_policy
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import ApiUser
from tests.support.api import make_endpoint
from tests.support.clicks import make_log
from tests.support.pages import login, one, soup

MAPPING = {"mappings": {"properties": {"timestamp": {"type": "date"}}}}


def _event(i: int, action: str = "click") -> dict[str, Any]:
    return {
        "action_name": action,
        "query_id": f"q{i % 3}",
        "timestamp": f"2025-03-01T10:{i // 60:02d}:{i % 60:02d}Z",
        "event_attributes": {"object": {"object_id": f"doc{i}"}, "position": {"ordinal": i % 5}},
    }


def _index(engine: MoviesEngine, index: str, records: list[dict[str, Any]]) -> None:
    lines = "".join(
        json.dumps({"index": {"_index": index}}) + "\n" + json.dumps(r) + "\n" for r in records
    )
    answer = httpx.post(
        f"{engine.url}/_bulk",
        params={"refresh": "true"},
        content=lines,
        headers={"content-type": "application/x-ndjson"},
    )
    assert answer.status_code == 200 and not answer.json()["errors"], answer.text


@pytest.fixture
def ubi_indexes(movies_engine: MoviesEngine) -> MoviesEngine:
    for index in ("ubi_queries", "ubi_events"):
        httpx.delete(f"{movies_engine.url}/{index}")
        assert httpx.put(f"{movies_engine.url}/{index}", json=MAPPING).status_code == 200
    return movies_engine


def test_pull_pages_then_fetches_only_new_records(api: ApiUser, ubi_indexes: MoviesEngine) -> None:
    queries = [
        {
            "query_id": f"q{i}",
            "user_query": text,
            "timestamp": f"2025-03-01T09:00:0{i}Z",
            "application": "shop",
        }
        for i, text in enumerate(["shoes", "socks", "hats"])
    ]
    _index(ubi_indexes, "ubi_queries", queries)
    events = [_event(i) for i in range(24)]
    events.append(
        {
            "action_name": "click",
            "timestamp": "2025-03-01T10:00:30Z",
            "event_attributes": {"object": {"name": "no id"}, "position": {"ordinal": 1}},
        }
    )
    _index(ubi_indexes, "ubi_events", events)
    endpoint = make_endpoint(api, ubi_indexes.index_url)
    log = make_log(api, position_base=0)
    url = f"/api/v1/click-logs/{log['id']}/pull"
    body = {"search_endpoint_id": endpoint["id"], "page_size": 10}
    first = api.post(url, json=body)
    assert first.status_code == 202, first.text
    got = first.json()
    assert got["status"] == "finished"
    assert (got["queries"]["fetched"], got["queries"]["stored"]) == (3, 3)
    events_pulled = got["events"]
    assert (events_pulled["fetched"], events_pulled["pages"]) == (25, 3)
    assert (events_pulled["stored"], events_pulled["refused_count"]) == (24, 1)
    (refusal,) = events_pulled["refused"]
    assert refusal["message"].startswith("ubi_events document ")
    assert "object_id" in refusal["message"]
    assert events_pulled["cursor"].startswith("2025-03-01T10:00:30")
    summary = api.get(f"/api/v1/click-logs/{log['id']}/summary").json()
    assert (summary["queries"], summary["events"]) == (3, 24)
    assert summary["distinct_queries"] == 3

    # Again: only the records of the cursor's millisecond come back, and none is stored twice.
    again = api.post(url, json=body).json()
    assert (again["queries"]["fetched"], again["queries"]["stored"]) == (1, 0)
    assert again["queries"]["duplicates"] == 1
    assert (again["events"]["fetched"], again["events"]["stored"]) == (1, 0)
    assert again["events"]["refused_count"] == 1  # the bad one is at the cursor itself

    _index(ubi_indexes, "ubi_events", [_event(i, "impression") for i in range(40, 44)])
    more = api.post(url, json=body).json()
    assert (more["events"]["fetched"], more["events"]["stored"]) == (5, 4)
    assert more["events"]["cursor"].startswith("2025-03-01T10:00:43")
    summary = api.get(f"/api/v1/click-logs/{log['id']}/summary").json()
    assert summary["events"] == 28 and summary["by_action"] == {"click": 24, "impression": 4}
    # 0-based ordinals 0..3 are stored as ranks 1..4.
    assert [r["rank"] for r in summary["ctr_by_rank"]] == [1, 2, 3, 4]

    # `since` overrides the cursor: everything from then on is read again (nothing stored).
    since = api.post(url, json={**body, "since": "2025-03-01T00:00:00Z"}).json()
    assert (since["events"]["fetched"], since["events"]["stored"]) == (29, 0)
    # The log remembers the last pull for its page.
    read = api.get(f"/api/v1/pages/click-logs/{log['id']}").json()
    assert read["last_pull"]["events"]["fetched"] == 29


def test_pull_window_and_missing_index(api: ApiUser, ubi_indexes: MoviesEngine) -> None:
    _index(ubi_indexes, "ubi_events", [_event(i) for i in range(10)])
    endpoint = make_endpoint(api, ubi_indexes.index_url)
    log = make_log(api)
    body = {
        "search_endpoint_id": endpoint["id"],
        "since": "2025-03-01T10:00:02Z",
        "until": "2025-03-01T10:00:05Z",
        "queries_index": "ubi_queries_elsewhere",
    }
    got = api.post(f"/api/v1/click-logs/{log['id']}/pull", json=body).json()
    assert got["queries"]["missing"] is True and got["queries"]["fetched"] == 0
    # 10:00:02, :03 and :04; ordinals 2..4 are 1-based here.
    assert (got["events"]["fetched"], got["events"]["stored"]) == (3, 3)


def test_pull_refuses_bad_input_and_reports_a_down_engine(
    api: ApiUser, other_api: ApiUser, engine_down_url: str
) -> None:
    log = make_log(api)
    url = f"/api/v1/click-logs/{log['id']}/pull"
    solr = make_endpoint(api, "http://127.0.0.1:9/solr/x", engine="solr")
    answer = api.post(url, json={"search_endpoint_id": solr["id"]})
    assert answer.status_code == 422 and "OpenSearch or Elasticsearch" in answer.text
    theirs = make_endpoint(other_api, "http://127.0.0.1:9/movies")
    assert api.post(url, json={"search_endpoint_id": theirs["id"]}).status_code == 404
    down = make_endpoint(api, f"{engine_down_url}/movies")
    assert (
        api.post(url, json={"search_endpoint_id": down["id"], "events_index": "UBI/x"}).status_code
        == 422
    )
    failed = api.post(url, json={"search_endpoint_id": down["id"]})
    assert failed.status_code == 502
    assert "cannot connect" in failed.json()["detail"]
    page = api.get(f"/api/v1/pages/click-logs/{log['id']}").json()
    assert page["last_pull"]["status"] == "failed"
    assert (
        api.post(
            url,
            json={
                "search_endpoint_id": down["id"],
                "since": "2025-01-02T00:00:00Z",
                "until": "2025-01-01T00:00:00Z",
            },
        ).status_code
        == 422
    )


def test_pull_button_on_the_log_page(
    api: ApiUser, client: TestClient, ubi_indexes: MoviesEngine
) -> None:
    _index(ubi_indexes, "ubi_events", [_event(i) for i in range(12)])
    endpoint = make_endpoint(api, ubi_indexes.index_url)
    make_endpoint(api, "http://127.0.0.1:9/solr/x", engine="solr", name="solr one")
    log = make_log(api, position_base=0)
    token = login(client)
    page = soup(client.get(f"/click-logs/{log['id']}"))
    form = one(page, "#pull-form")
    # Only the endpoints a pull can read are offered.
    assert [o["value"] for o in form.select("select[name=search_endpoint_id] option")] == [
        str(endpoint["id"])
    ]
    assert page.select("#last-pull") == []
    answer = client.post(
        str(form["action"]),
        data={"csrf_token": token, "search_endpoint_id": str(endpoint["id"])},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert answer.headers["location"].endswith(f"/click-logs/{log['id']}#pull")
    page = soup(client.get(f"/click-logs/{log['id']}"))
    assert one(page, "#last-pull")["data-status"] == "finished"
    assert one(page, "#last-pull tr[data-index=events] .stored").get_text() == "12"
    assert one(page, "#last-pull tr[data-index=queries] .stored").get_text() == "0"
    assert one(page, "#event-count").get_text() == "12"
    again = client.post(
        str(form["action"]),
        data={"csrf_token": token, "search_endpoint_id": str(endpoint["id"])},
        follow_redirects=False,
    )
    assert again.status_code == 303
    page = soup(client.get(f"/click-logs/{log['id']}"))
    assert one(page, "#last-pull tr[data-index=events] .fetched").get_text() == "1"
    assert one(page, "#last-pull tr[data-index=events] .stored").get_text() == "0"
    bad = client.post(
        str(form["action"]),
        data={"csrf_token": token, "search_endpoint_id": "x"},
        follow_redirects=False,
    )
    assert bad.status_code == 422


def test_pull_obeys_the_outbound_policy(api: ApiUser, ubi_indexes: MoviesEngine) -> None:
    # The engine is on loopback, which the default policy refuses: nothing is read.
    _index(ubi_indexes, "ubi_events", [_event(i) for i in range(3)])
    endpoint = make_endpoint(api, ubi_indexes.index_url)
    log = make_log(api, position_base=0)
    url = f"/api/v1/click-logs/{log['id']}/pull"
    previous = current_policy()
    install_policy(OutboundPolicy(block_private=True))
    try:
        refused = api.post(url, json={"search_endpoint_id": endpoint["id"]})
    finally:
        install_policy(previous)
    assert refused.status_code == 502
    assert "not allowed on this server" in refused.json()["detail"]
    assert api.get(f"/api/v1/click-logs/{log['id']}/summary").json()["events"] == 0
    allowed = api.post(url, json={"search_endpoint_id": endpoint["id"]})
    assert allowed.status_code == 202 and allowed.json()["events"]["stored"] == 3


def test_pull_epoch_millisecond_timestamps_without_a_mapping(
    api: ApiUser, movies_engine: MoviesEngine
) -> None:
    # ubi-demo style: integer epoch milliseconds, indexed with no mapping (a long field).
    index = "ubi_events_epoch"
    httpx.delete(f"{movies_engine.url}/{index}")
    start = 1_735_689_600_000
    events = [{**_event(i), "timestamp": start + 1000 * i} for i in range(1, 13)]
    _index(movies_engine, index, events)
    endpoint = make_endpoint(api, movies_engine.index_url)
    log = make_log(api, position_base=0)
    body = {"search_endpoint_id": endpoint["id"], "events_index": index, "page_size": 10}
    url = f"/api/v1/click-logs/{log['id']}/pull"
    first = api.post(url, json=body).json()["events"]
    assert (first["fetched"], first["stored"], first["pages"]) == (12, 12, 2)
    assert first["cursor"].startswith("2025-01-01T00:00:12")
    again = api.post(url, json=body).json()["events"]
    assert (again["fetched"], again["stored"], again["duplicates"]) == (1, 0, 1)
