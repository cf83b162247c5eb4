"""After Apply, the case shows the applied combination's run and score (the badge, the query
list, the cases list and the dashboard), not the sweep's last combination."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.flaky_engine import TEMPLATE
from tests.support.slow_engine import loopback_server

pytestmark = pytest.mark.runner  # starts sweeps

TEXTS = ["query 0", "query 1", "query 2", "query 3"]
# k=1: "query 0" gets "bad" first, NDCG@10 100 / log2(3) = 63.0930; the rest 100 each.
LAST = (3 * 100 + 100 / 1.5849625007) / 4


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        text, k = body["query"]["match"]["title"], body["ext"]["k"]
        order = ["bad", "good"] if text == "query 0" and k < 2 else ["good", "bad"]
        hits = [{"_id": d, "_score": 2.0 - i, "_source": {"title": d}} for i, d in enumerate(order)]
        data = json.dumps({"hits": {"total": {"value": 2}, "hits": hits}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return


@contextmanager
def _engine() -> Iterator[str]:
    """Serve an engine where k below 2 puts "bad" first for "query 0"; yield its index URL."""
    server = loopback_server()
    server.RequestHandlerClass = _Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/movies"
    finally:
        server.shutdown()
        server.server_close()


def test_apply_shows_the_applied_combination_not_the_last(api: ApiUser) -> None:
    with _engine() as url:
        endpoint = make_endpoint(api, url)
        case = make_case(
            api,
            endpoint["id"],
            query_template=TEMPLATE,
            knobs={"k": 1},
            scorer_id=scorer_id(api, "NDCG@10"),
        )
        case_id = case["id"]
        ids = add_queries(api, case_id, TEXTS)
        for qid in ids.values():
            body = {"ratings": [{"doc_id": "good", "rating": 3}, {"doc_id": "bad", "rating": 0}]}
            path = f"/api/v1/cases/{case_id}/queries/{qid}/ratings"
            assert api.put(path, json=body).status_code == 200
        answer = api.post(
            f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"k": [4, 3, 1]}}
        )
        assert answer.status_code == 200, answer.text
    sweep = answer.json()
    scores = [round(r["case_score"], 4) for r in sweep["results"]]
    assert [r["knobs"] for r in sweep["results"]] == [{"k": 4.0}, {"k": 3.0}, {"k": 1.0}]
    assert scores == [100.0, 100.0, round(LAST, 4)]
    best = sweep["best"]
    assert best["run_id"] != sweep["results"][-1]["run_id"] and best["case_score"] == 100.0
    # Before Apply, a sweep's combinations are not the case's runs (they search with knobs
    # the case does not have): the case has no run of its own yet, so no score.
    assert api.get(f"/api/v1/pages/cases/{case_id}").json()["score"]["case_score"] is None
    applied = api.post(
        f"/api/v1/cases/{case_id}/sweeps/{sweep['id']}/apply", json={"run_id": best["run_id"]}
    )
    assert applied.status_code == 200, applied.text
    assert applied.json()["knobs"] == best["knobs"]

    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    assert twin["score"]["case_score"] == 100.0
    latest = api.get(f"/api/v1/cases/{case_id}/runs").json()[0]
    assert latest["id"] == twin["score"]["run_id"]
    assert (latest["trigger"], latest["case_score"]) == ("apply", 100.0)
    assert latest["try_number"] == 2  # the new try the knobs made
    detail = api.get(f"/api/v1/cases/{case_id}/runs/{latest['id']}").json()
    first = next(q for q in detail["queries"] if q["text"] == "query 0")
    assert [d["id"] for d in first["docs"]] == ["good", "bad"] and first["score"] == 100.0
    listing = api.get(f"/api/v1/pages/cases/{case_id}/query-list").json()
    assert [q["score"] for q in listing["items"]] == [100.0] * 4
    cases = api.get("/api/v1/pages/cases").json()
    assert next(c for c in cases["cases"] if c["id"] == case_id)["last_score"] == 100.0
    board = api.get("/api/v1/dashboard").json()
    assert next(c for c in board["cases"] if c["id"] == case_id)["score"] == 100.0
