"""A Quepid case export, end to end: imported, run against the embedded engine, scored by
the Quepid-environment scorer made for Quepid's shipped P@10."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.quepid import export, fixture, imported

# The runner executes in threads with their own connections: its rows must be committed.
pytestmark = pytest.mark.runner


def test_a_quepid_export_imports_runs_and_scores_like_quepid(
    api: ApiUser, movies_engine: Any
) -> None:
    data = fixture("movies_es_case.json")
    data["try"]["search_endpoint"]["endpoint_url"] = f"{movies_engine.index_url}/_search"
    case = imported(api, data)
    assert case["warnings"] == []
    # The engine answered the import's one query.
    assert (case["search_endpoint_reachable"], case["search_endpoint_problem"]) == (True, None)
    assert case["scorer_name"] == "P@10 (Quepid)"
    endpoint = api.get(f"/api/v1/search-endpoints/{case['search_endpoint_id']}").json()
    assert (endpoint["engine"], endpoint["url"]) == ("opensearch", movies_engine.index_url)
    scorer = api.get(f"/api/v1/scorers/{case['scorer_id']}").json()
    assert (scorer["name"], scorer["kind"], scorer["environment"]) == (
        "P@10 (Quepid)",
        "javascript",
        "quepid",
    )
    assert scorer["builtin"] is False and scorer["scale"] == [0.0, 1.0]

    response = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true")
    assert response.status_code == 200, response.text
    run = response.json()
    assert run["status"] == "finished" and run["scorer_id"] == case["scorer_id"]
    by_text = {q["text"]: q for q in run["queries"]}
    wars, batman, toys = by_text["star wars"], by_text["batman"], by_text["toy story"]
    # The curator variable titleBoost=10 ranks the saga first.
    assert [d["id"] for d in wars["docs"]] == [
        "2906", "3097", "2884", "773", "913", "2845", "2846", "555", "607", "1033"
    ]  # fmt: skip
    # Quepid's P@10: docs rated above 0 among those returned (at most 10), over how many
    # were returned; 6 of 10 and, with only 6 Batman films, 3 of 6.
    assert (wars["status"], wars["score"]) == ("scored", pytest.approx(60.0))
    assert [d["id"] for d in batman["docs"]] == ["149", "146", "147", "148", "1265", "1396"]
    assert (batman["status"], batman["score"]) == ("scored", pytest.approx(50.0))
    # No ratings: Quepid's P@10 still sets 0 of 10.
    assert (toys["status"], toys["score"]) == ("scored", pytest.approx(0.0))
    assert run["case_score"] == pytest.approx(110 / 3)

    # What Relevo exports of it imports again to the same endpoint and scorer.
    again = imported(api, export(api, case["id"]))
    assert again["search_endpoint_id"] == case["search_endpoint_id"]
    assert again["scorer_id"] == case["scorer_id"]
