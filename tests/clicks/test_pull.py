"""Pulling a UBI plugin's indexes from the embedded engine: paged, resumable, idempotent.

A pull is a job: the POST answers 202 with the pull queued, and the tests poll its
`poll_url` until it ends (``_pulled``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.clicks import pull
from app.clicks.schemas import PullBody, PulledIndex, PullResult
from app.outbound.policy import OutboundPolicy, current_policy, install_policy
from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import ApiUser
from tests.support.api import make_endpoint
from tests.support.clicks import make_log
from tests.support.pages import login, one, soup

# Pulls run in the app's run manager, on their own connections: rows must be committed.
pytestmark = pytest.mark.runner

WAIT_S = 60  # the longest a test waits for a pull to end


def _wait(api: ApiUser, poll_url: str) -> dict[str, Any]:
    """Poll a pull until it is finished or failed (at most WAIT_S seconds)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        state: dict[str, Any] = api.get(poll_url).json()
        if state["status"] in ("finished", "failed"):
            return state
        assert time.monotonic() < deadline, f"the pull did not end: {state}"
        time.sleep(0.05)


def _pulled(api: ApiUser, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """Start a pull, check the 202 it answers, and return the pull once it has ended."""
    answer = api.post(url, json=body)
    assert answer.status_code == 202, answer.text
    started = answer.json()
    assert started["status"] in ("queued", "running", "finished")
    assert answer.headers["location"] == started["poll_url"]
    assert started["poll_url"].endswith(url)
    ended = _wait(api, started["poll_url"])
    assert ended["id"] == started["id"]
    return ended


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
    got = _pulled(api, url, body)
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
    again = _pulled(api, url, body)
    assert (again["queries"]["fetched"], again["queries"]["stored"]) == (1, 0)
    assert again["queries"]["duplicates"] == 1
    assert (again["events"]["fetched"], again["events"]["stored"]) == (1, 0)
    assert again["events"]["refused_count"] == 1  # the bad one is at the cursor itself

    _index(ubi_indexes, "ubi_events", [_event(i, "impression") for i in range(40, 44)])
    more = _pulled(api, url, body)
    assert (more["events"]["fetched"], more["events"]["stored"]) == (5, 4)
    assert more["events"]["cursor"].startswith("2025-03-01T10:00:43")
    summary = api.get(f"/api/v1/click-logs/{log['id']}/summary").json()
    assert summary["events"] == 28 and summary["by_action"] == {"click": 24, "impression": 4}
    # 0-based ordinals 0..3 are stored as ranks 1..4.
    assert [r["rank"] for r in summary["ctr_by_rank"]] == [1, 2, 3, 4]

    # `since` overrides the cursor: everything from then on is read again (nothing stored).
    since = _pulled(api, url, {**body, "since": "2025-03-01T00:00:00Z"})
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
    got = _pulled(api, f"/api/v1/click-logs/{log['id']}/pull", body)
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
    assert api.get(url).status_code == 404  # never pulled
    failed = _pulled(api, url, {"search_endpoint_id": down["id"]})
    assert failed["status"] == "failed" and failed["finished_at"] is not None
    assert "cannot connect" in failed["error"] and "0 records were stored" in failed["error"]
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
    poll_url = f"/api/v1/click-logs/{log['id']}/pull"
    _wait(api, poll_url)
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
    _wait(api, poll_url)
    # The pull's block alone, as the page polls it while a pull is under way.
    page = soup(client.get(f"/click-logs/{log['id']}/pull"))
    assert one(page, "#last-pull")["data-status"] == "finished"
    assert not one(page, "#last-pull").has_attr("hx-get")  # ended: no more polling
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
    assert api.get(url).status_code == 404  # refused before anything was recorded
    allowed = _pulled(api, url, {"search_endpoint_id": endpoint["id"]})
    assert allowed["status"] == "finished" and allowed["events"]["stored"] == 3


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
    first = _pulled(api, url, body)["events"]
    assert (first["fetched"], first["stored"], first["pages"]) == (12, 12, 2)
    assert first["cursor"].startswith("2025-01-01T00:00:12")
    again = _pulled(api, url, body)["events"]
    assert (again["fetched"], again["stored"], again["duplicates"]) == (1, 0, 1)


class _GatedEngine:
    """An OpenSearch-shaped engine whose searches wait until the test opens its gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.searches: list[str] = []
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                engine.searches.append(self.path.split("?")[0])
                engine.gate.wait(WAIT_S)
                hits = []
                if self.path.startswith("/ubi_events/"):
                    hits = [{"_id": "e1", "_source": _event(1)}]
                body = json.dumps({"hits": {"hits": hits}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def index_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/movies"


@pytest.fixture
def gated_engine() -> Iterator[_GatedEngine]:
    engine = _GatedEngine()
    engine.thread.start()
    try:
        yield engine
    finally:
        engine.gate.set()
        engine.server.shutdown()
        engine.server.server_close()


def test_the_pull_answers_before_it_ends_and_one_runs_at_a_time(
    api: ApiUser, client: TestClient, gated_engine: _GatedEngine
) -> None:
    endpoint = make_endpoint(api, gated_engine.index_url)
    log = make_log(api, position_base=0)
    url = f"/api/v1/click-logs/{log['id']}/pull"
    body = {"search_endpoint_id": endpoint["id"]}
    # The engine answers nothing until the gate opens: the 202 comes back before that.
    first = api.post(url, json=body)
    assert first.status_code == 202, first.text
    assert first.json()["status"] == "queued"
    assert first.json()["request"]["queries_index"] == "ubi_queries"
    assert api.get(url).json()["status"] in ("queued", "running")
    # A second pull, over the API or the page, while the first one is under way: 409.
    second = api.post(url, json=body)
    assert second.status_code == 409, second.text
    assert "wait for it to end" in second.json()["detail"]
    token = login(client)
    page = soup(client.get(f"/click-logs/{log['id']}"))
    block = one(page, "#last-pull")
    assert block["data-status"] in ("queued", "running")
    assert str(block["hx-get"]).endswith(f"/click-logs/{log['id']}/pull")  # it polls itself
    from_page = client.post(
        f"/click-logs/{log['id']}/pull",
        data={"csrf_token": token, "search_endpoint_id": str(endpoint["id"])},
        follow_redirects=False,
    )
    assert from_page.status_code == 409
    assert api.get(url).json()["id"] == first.json()["id"]  # still the first pull

    gated_engine.gate.set()
    ended = _wait(api, url)
    assert ended["id"] == first.json()["id"] and ended["status"] == "finished"
    assert (ended["queries"]["fetched"], ended["events"]["stored"]) == (0, 1)
    assert gated_engine.searches == ["/ubi_queries/_search", "/ubi_events/_search"]
    # Once it has ended, the next pull may start.
    again = _pulled(api, url, body)
    assert again["id"] != ended["id"] and again["events"]["duplicates"] == 1


def test_a_silent_pull_counts_as_abandoned() -> None:
    now = datetime.now(UTC)
    state = PullResult(
        id="p",
        status="running",
        search_endpoint_id=1,
        at=now - timedelta(hours=1),
        updated_at=now - timedelta(seconds=10),
        queries=PulledIndex(index="ubi_queries"),
        events=PulledIndex(index="ubi_events"),
        request=PullBody(search_endpoint_id=1),
    )
    assert pull.under_way(state)
    state.updated_at = now - timedelta(seconds=pull.PULL_STALE_S + 1)
    assert not pull.under_way(state)  # another pull may start
    state.updated_at, state.status = now, "failed"
    assert not pull.under_way(state)
