"""A stateful property test of the one score model, through the JSON API (the pages' twins
and the service layer behind them).

Random sequences of rating and unrating docs, setting weights, switching the aggregate,
adding and removing a metric and running against an engine that fails some or all queries;
after every step: badge == metric panel == API, the stored totals equal a recount from the
stored rows and today's weights and aggregate, the latest run's rows equal a re-score from
the stored ratings, and a run in which every query errored is "failed" and scored nowhere.

`make test` runs a bounded profile; RELEVO_STATEFUL_EXAMPLES=200 (say) runs a longer one.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.flaky_engine import TEMPLATE
from tests.support.slow_engine import loopback_server

pytestmark = pytest.mark.runner  # starts runs

EXAMPLES = int(os.environ.get("RELEVO_STATEFUL_EXAMPLES", "12"))
STEPS = int(os.environ.get("RELEVO_STATEFUL_STEPS", "12"))
TEXTS = ["alpha", "beta", "gamma"]
DOCS = ["d1", "d2", "d3"]
FAILING: set[str] = set()  # the engine answers 500 for these query texts


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        text = body["query"]["match"]["title"]
        payload: dict[str, Any]
        if text in FAILING:
            status, payload = 500, {"error": {"type": "boom", "reason": "failing on purpose"}}
        else:
            hits = [
                {"_id": d, "_score": 3.0 - i, "_source": {"title": d}} for i, d in enumerate(DOCS)
            ]
            status, payload = 200, {"hits": {"total": {"value": 3}, "hits": hits}}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return


@contextmanager
def _engine() -> Iterator[str]:
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


def _mean(pairs: list[tuple[float, float]], weighted: bool) -> float | None:
    if not pairs:
        return None
    if weighted:
        return sum(s * w for s, w in pairs) / sum(w for _, w in pairs)
    return sum(s for s, _ in pairs) / len(pairs)


def machine(api: ApiUser, url: str) -> type[RuleBasedStateMachine]:
    """Return the state machine class, bound to the test's API user and engine."""
    ndcg, p10 = scorer_id(api, "NDCG@10"), scorer_id(api, "P@10")

    class ScoreModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            FAILING.clear()
            endpoint = make_endpoint(api, url)
            case = make_case(
                api, endpoint["id"], query_template=TEMPLATE, knobs={"k": 1}, scorer_id=ndcg
            )
            self.case_id = int(case["id"])
            self.ids = add_queries(api, self.case_id, TEXTS)
            self.path = f"/api/v1/cases/{self.case_id}"
            # Unequal weights and scores from the start, so that few steps tell the means apart.
            for text, weight, (doc, grade) in zip(
                TEXTS, (3.0, 1.0, 0.5), (("d1", 3), ("d3", 3), ("d2", 1)), strict=True
            ):
                self.weigh(text=text, weight=weight)
                self.rate(text=text, doc=doc, grade=grade)

        @rule(
            text=st.sampled_from(TEXTS),
            doc=st.sampled_from(DOCS),
            grade=st.sampled_from([None, 0, 1, 2, 3]),
        )
        def rate(self, text: str, doc: str, grade: int | None) -> None:
            body = {"ratings": [{"doc_id": doc, "rating": grade}]}
            answer = api.put(f"{self.path}/queries/{self.ids[text]}/ratings", json=body)
            assert answer.status_code == 200, answer.text

        @rule(text=st.sampled_from(TEXTS), weight=st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        def weigh(self, text: str, weight: float) -> None:
            answer = api.patch(f"{self.path}/queries/{self.ids[text]}", json={"weight": weight})
            assert answer.status_code == 200, answer.text

        @rule(aggregate=st.sampled_from(["mean", "weighted_mean"]))
        def switch_aggregate(self, aggregate: str) -> None:
            assert api.patch(self.path, json={"aggregate": aggregate}).status_code == 200

        @rule(on=st.booleans())
        def toggle_metric(self, on: bool) -> None:
            answer = api.patch(self.path, json={"metric_scorer_ids": [p10] if on else []})
            assert answer.status_code == 200, answer.text

        @rule(failing=st.sets(st.sampled_from(TEXTS)))
        def run(self, failing: set[str]) -> None:
            FAILING.clear()
            FAILING.update(failing)
            answer = api.post(f"{self.path}/runs?wait=true")
            assert answer.status_code == 200, answer.text
            run = answer.json()
            every_failed = len(failing) == len(TEXTS)
            assert run["status"] == ("failed" if every_failed else "finished")

        def _latest(self) -> dict[str, Any] | None:
            runs = api.get(f"{self.path}/runs").json()
            ended = [
                r
                for r in runs
                if r["status"] in ("finished", "failed")
                and r["errors"] + r["scored"] + r["unscored"]
            ]
            if not ended:
                return None
            detail: dict[str, Any] = api.get(f"{self.path}/runs/{ended[0]['id']}").json()
            return detail

        @invariant()
        def one_number_everywhere(self) -> None:
            run = self._latest()
            if run is None:
                return
            case = api.get(self.path).json()
            weights = {q["id"]: q["weight"] for q in api.get(f"{self.path}/queries").json()}
            pairs = [
                (q["score"], weights.get(q["query_id"], 1.0))
                for q in run["queries"]
                if q["status"] == "scored"
            ]
            expected = _mean(pairs, case["aggregate"] == "weighted_mean")
            stored = run["case_score"]
            assert (stored is None) == (expected is None)
            if stored is not None:
                assert round(stored, 6) == round(expected or 0.0, 6)
            assert run["metrics"][0]["case_score"] == stored  # the panel's primary tile
            twin = api.get(f"/api/v1/pages/cases/{self.case_id}").json()
            assert twin["score"]["case_score"] == stored  # the badge
            assert twin["score"]["run_id"] == run["id"]
            if all(q["status"] == "error" for q in run["queries"]):
                assert run["status"] == "failed" and stored is None
                assert all(m["case_score"] is None for m in run["metrics"])
            # Stored == re-scored from the stored ratings: a re-score changes nothing.
            again = api.post(f"{self.path}/runs/{run['id']}/rescore").json()
            assert again["case_score"] == stored
            assert [q["score"] for q in again["queries"]] == [q["score"] for q in run["queries"]]

    return ScoreModel


def test_the_score_model_holds_after_any_sequence(api: ApiUser) -> None:
    with _engine() as url:
        run_state_machine_as_test(
            machine(api, url),
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=STEPS,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
