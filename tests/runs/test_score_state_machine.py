"""A stateful property test of the one score model, through the JSON API (the pages' twins
and the service layer behind them).

Random sequences of rating and unrating docs, setting weights, switching the aggregate,
adding and removing a metric, running against an engine that fails some or all queries, a
knob sweep of two combinations and Apply of its best, comparing two runs, and exporting the
ratings (CSV or RRE) and importing them back into the emptied case; after every step: badge
== metric panel == API (and the cases list and the dashboard) for the case's current run,
which is never a sweep's combination; the stored totals equal a recount from the stored rows
and today's weights and aggregate; the current run's rows equal a re-score from the stored
ratings; a run in which every query errored is "failed" and scored nowhere. After Apply the
case shows the applied run's score everywhere; a comparison's verdict follows its tests
(better or worse only when the Holm-corrected p is below 0.05 and the interval excludes 0);
a re-import gives back the stored scores on re-score.

`make test` runs a bounded profile (RELEVO_STATEFUL_EXAMPLES, default 4, of
RELEVO_STATEFUL_STEPS, default 10); RELEVO_STATEFUL_EXAMPLES=200 (say) runs a longer one.
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

EXAMPLES = int(os.environ.get("RELEVO_STATEFUL_EXAMPLES", "4"))
STEPS = int(os.environ.get("RELEVO_STATEFUL_STEPS", "10"))
# Ten queries: the fewest a comparison's verdict can be better or worse with (below ten
# paired queries it is "too_few"), so the verdict rule is tested, not only its small case.
TEXTS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
DOCS = ["d1", "d2", "d3"]
FAILING: set[str] = set()  # the engine answers 500 for these query texts
LEVEL = 0.05  # the comparison's significance level (app.compare.stats.SIGNIFICANT)


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        text = body["query"]["match"]["title"]
        # An odd knob k ranks the docs in order, an even one reversed: a sweep's two
        # combinations score differently.
        docs = DOCS if int(body["ext"]["k"]) % 2 else DOCS[::-1]
        payload: dict[str, Any]
        if text in FAILING:
            status, payload = 500, {"error": {"type": "boom", "reason": "failing on purpose"}}
        else:
            hits = [
                {"_id": d, "_score": 3.0 - i, "_source": {"title": d}} for i, d in enumerate(docs)
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


# Some queries failing (often none), or every one.
FAILURES: st.SearchStrategy[set[str]] = st.one_of(
    st.just(set(TEXTS)), st.sets(st.sampled_from(TEXTS), max_size=3), st.just(set())
)


def _verdict_follows_its_tests(comparison: dict[str, Any]) -> None:
    """The verdict is the one rule applied to the numbers beside it (API.md, Compare)."""
    stats, metrics = comparison["stats"], comparison["metrics"]
    p = comparison["decision_p"]
    if len(metrics) > 1:  # several metrics: the primary's Holm-corrected p
        assert metrics[0]["scorer_id"] == comparison["scorer_id"]
        assert p == metrics[0]["p_holm"]
        assert p is None or p >= (stats["randomization_p"] or 0.0) - 1e-12
    else:
        assert p == stats["randomization_p"]
    verdict = comparison["verdict"]
    if stats["n"] == 0:
        assert verdict == "nothing_to_compare"
        return
    if stats["n"] < 10:
        assert verdict == "too_few"
        return
    low, high = stats["ci_low"], stats["ci_high"]
    p_says = p is not None and p < LEVEL
    interval_says = low is not None and high is not None and low * high > 0
    if p_says and interval_says:
        assert verdict == ("better" if stats["mean_delta"] > 0 else "worse")
        assert "unlikely to be chance" in comparison["summary"]
    else:
        assert verdict == ("tests_disagree" if p_says or interval_says else "no_evidence")
        assert "unlikely to be chance" not in comparison["summary"]


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
            weights = (3.0, 1.0, 0.5)
            # d3 rated on most queries: the reversed order (an even k) scores higher on eight
            # of the ten, so a sweep's best changes the knob and its comparison can decide.
            grades = (("d3", 3), ("d3", 2), ("d3", 1), ("d2", 1))
            for index, text in enumerate(TEXTS):
                self.weigh(text=text, weight=weights[index % len(weights)])
                doc, grade = grades[index % len(grades)]
                self.rate(text=text, doc=doc, grade=grade)
            self.run(failing=set())  # a first run, so that a comparison is one step away

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

        @rule(failing=FAILURES)
        def run(self, failing: set[str]) -> None:
            FAILING.clear()
            FAILING.update(failing)
            answer = api.post(f"{self.path}/runs?wait=true")
            assert answer.status_code == 200, answer.text
            run = answer.json()
            every_failed = len(failing) == len(TEXTS)
            assert run["status"] == ("failed" if every_failed else "finished")

        @rule(failing=FAILURES)
        def sweep_and_apply(self, failing: set[str]) -> None:
            FAILING.clear()
            FAILING.update(failing)
            before = api.get(f"/api/v1/pages/cases/{self.case_id}").json()["score"]
            answer = api.post(f"{self.path}/sweeps?wait=true", json={"knobs": {"k": [1, 2]}})
            assert answer.status_code == 200, answer.text
            sweep = answer.json()
            assert sweep["status"] == "finished" and sweep["done"] == 2
            # The combinations are not the case's runs: the badge has not moved.
            after = api.get(f"/api/v1/pages/cases/{self.case_id}").json()["score"]
            assert after["run_id"] == before["run_id"]
            best = sweep["best"]
            if best is None:  # no complete combination (some queries failed)
                return
            # The best is the highest of the complete combinations; with none complete (a
            # query unscored in both), of those without errors (best_note says so).
            complete = [r for r in sweep["results"] if r["complete"]]
            candidates = complete or [r for r in sweep["results"] if not r["errors"]]
            assert best["case_score"] == max(r["case_score"] for r in candidates)
            assert (sweep["best_note"] is None) == bool(complete)
            answer = api.post(
                f"{self.path}/sweeps/{sweep['id']}/apply",
                json={"run_id": best["run_id"], "confirm_partial": not best["complete"]},
            )
            assert answer.status_code == 200, answer.text
            assert answer.json()["knobs"]["k"] == best["knobs"]["k"]
            # The case now shows the applied run's score everywhere.
            applied = api.get(f"{self.path}/runs").json()[0]
            assert applied["trigger"] == "apply" and applied["sweep_id"] is None
            assert applied["case_score"] == best["case_score"]
            score = api.get(f"/api/v1/pages/cases/{self.case_id}").json()["score"]
            assert (score["run_id"], score["case_score"]) == (applied["id"], best["case_score"])
            row = self._case_row()
            assert row["last_score"] == best["case_score"]
            assert self._dashboard_row()["score"] == best["case_score"]

        @rule(data=st.data())
        def compare(self, data: st.DataObject) -> None:
            runs = api.get(f"{self.path}/runs").json()  # a sweep's runs may be compared too
            ended = [r["id"] for r in runs if r["status"] == "finished"]
            if len(ended) < 2:
                return
            base, other = data.draw(
                st.lists(st.sampled_from(ended), min_size=2, max_size=2, unique=True)
            )
            answer = api.get(f"{self.path}/runs/compare", params={"base": base, "other": other})
            assert answer.status_code == 200, answer.text
            _verdict_follows_its_tests(answer.json())

        @rule(fmt=st.sampled_from(["csv", "rre"]))
        def export_and_reimport(self, fmt: str) -> None:
            exported = api.get(f"{self.path}/ratings/export", params={"format": fmt})
            assert exported.status_code == 200, exported.text
            for text in TEXTS:  # empty the case's ratings, then import the file back
                body = {"ratings": [{"doc_id": d, "rating": None} for d in DOCS]}
                answer = api.put(f"{self.path}/queries/{self.ids[text]}/ratings", json=body)
                assert answer.status_code == 200, answer.text
            kind = "text/csv" if fmt == "csv" else "application/json"
            answer = api.post(
                f"{self.path}/ratings/import",
                params={"format": fmt},
                content=exported.content,
                headers={"Content-Type": kind},
            )
            assert answer.status_code == 200, answer.text
            again = api.get(f"{self.path}/ratings/export", params={"format": fmt})
            assert again.content == exported.content  # every rating back, none added
            # The invariant then re-scores the current run and finds the stored scores.

        def _case_runs(self) -> list[dict[str, Any]]:
            runs: list[dict[str, Any]] = api.get(f"{self.path}/runs").json()
            return [r for r in runs if r["sweep_id"] is None]

        def _case_row(self) -> dict[str, Any]:
            rows = api.get("/api/v1/pages/cases").json()["cases"]
            found: dict[str, Any] = next(r for r in rows if r["id"] == self.case_id)
            return found

        def _dashboard_row(self) -> dict[str, Any]:
            rows = api.get("/api/v1/dashboard").json()["cases"]
            found: dict[str, Any] = next(r for r in rows if r["id"] == self.case_id)
            return found

        def _latest(self) -> dict[str, Any] | None:
            ended = [
                r
                for r in self._case_runs()
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
                assert stored == pytest.approx(expected, rel=1e-12, abs=1e-9)
            assert run["metrics"][0]["case_score"] == stored  # the panel's primary tile
            twin = api.get(f"/api/v1/pages/cases/{self.case_id}").json()
            assert twin["score"]["case_score"] == stored  # the badge
            assert twin["score"]["run_id"] == run["id"]
            assert self._case_row()["last_score"] == stored  # the cases list
            if run["status"] == "failed":  # the dashboard shows the failure, not its score
                assert self._dashboard_row()["last_run_failed"]
            else:
                assert self._dashboard_row()["score"] == stored
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
