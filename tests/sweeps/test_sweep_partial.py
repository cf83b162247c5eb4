"""A sweep whose engine fails on some queries for one combination: that partial run has the
higher score, and still is not the best (README, "Partial runs")."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.flaky_engine import TEMPLATE, flaky_engine
from tests.support.pages import login, one, soup

pytestmark = pytest.mark.runner  # starts runs (and sweeps)

TEXTS = [f"query {n}" for n in range(25)]
HARD = {"query 3", "query 8", "query 13", "query 21"}


def test_a_partial_combination_is_not_the_best_even_with_the_higher_score(api: ApiUser) -> None:
    with flaky_engine(HARD) as url:
        endpoint = make_endpoint(api, url)
        ndcg = scorer_id(api, "NDCG@10")
        case = make_case(
            api, endpoint["id"], query_template=TEMPLATE, knobs={"k": 1}, scorer_id=ndcg
        )
        case_id = case["id"]
        ids = add_queries(api, case_id, TEXTS)
        for qid in ids.values():
            body = {"ratings": [{"doc_id": "good", "rating": 3}, {"doc_id": "bad", "rating": 0}]}
            path = f"/api/v1/cases/{case_id}/queries/{qid}/ratings"
            assert api.put(path, json=body).status_code == 200
        response = api.post(
            f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"k": [1, 2]}}
        )
        assert response.status_code == 200, response.text
        sweep = response.json()
    whole, partial = sweep["results"]
    # k=1: 21 queries at 100 and 4 with "good" second: 100 / log2(3) = 63.0930 each.
    assert whole["case_score"] == pytest.approx((21 * 100 + 4 * 100 / 1.5849625007) / 25, abs=1e-3)
    assert (whole["complete"], whole["scored"], whole["errors"], whole["total"]) == (
        True,
        25,
        0,
        25,
    )
    assert partial["case_score"] == pytest.approx(100.0)  # the easy 21 only
    assert (partial["complete"], partial["scored"], partial["errors"]) == (False, 21, 4)
    assert partial["status"] == "finished"
    assert sweep["best"]["run_id"] == whole["run_id"] and sweep["best_note"] is None
    apply = f"/api/v1/cases/{case_id}/sweeps/{sweep['id']}/apply"
    assert api.post(apply, json={"run_id": partial["run_id"]}).status_code == 409
    assert api.get(f"/api/v1/cases/{case_id}").json()["knobs"] == {"k": 1}

    # A sweep of the failing value alone has no best, and says why.
    with flaky_engine(HARD) as url:
        api.patch(f"/api/v1/search-endpoints/{endpoint['id']}", json={"url": url})
        alone = api.post(f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"k": [2]}})
    assert alone.status_code == 200, alone.text
    assert alone.json()["best"] is None
    assert alone.json()["best_note"] == (
        "No complete run: every combination had errors (engine or scorer)."
    )


def test_with_unrated_queries_the_best_is_among_runs_that_left_out_only_those(
    api: ApiUser, client: TestClient
) -> None:
    # Two queries have no ratings: every run leaves them unscored, so no run is complete.
    # k=1 scores the 23 others; k=2 fails on the 4 hard ones (errors): k=1 is the best.
    with flaky_engine(HARD) as url:
        endpoint = make_endpoint(api, url)
        ndcg = scorer_id(api, "NDCG@10")
        case = make_case(
            api, endpoint["id"], query_template=TEMPLATE, knobs={"k": 1}, scorer_id=ndcg
        )
        case_id = case["id"]
        ids = add_queries(api, case_id, TEXTS)
        for text, qid in ids.items():
            if text in ("query 0", "query 1"):
                continue
            body = {"ratings": [{"doc_id": "good", "rating": 3}, {"doc_id": "bad", "rating": 0}]}
            path = f"/api/v1/cases/{case_id}/queries/{qid}/ratings"
            assert api.put(path, json=body).status_code == 200
        response = api.post(
            f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"k": [1, 2]}}
        )
        assert response.status_code == 200, response.text
        sweep = response.json()
        first, failing = sweep["results"]
        # Two unrated queries leave every run short alike: unrated, not partial (coverage).
        assert (first["complete"], first["scored"], first["unscored"], first["errors"]) == (
            True,
            23,
            2,
            0,
        )
        assert (failing["scored"], failing["unscored"], failing["errors"]) == (19, 2, 4)
        assert failing["complete"] is False  # errors make a run partial
        # 19 easy queries at 100, the 4 hard ones with "good" second: 100 / log2(3) each.
        assert first["case_score"] == pytest.approx((19 * 100 + 4 * 63.0929754) / 23, abs=1e-3)
        assert failing["case_score"] == pytest.approx(100.0)  # higher, over fewer queries
        assert sweep["best"]["run_id"] == first["run_id"]
        assert sweep["best_note"] is None
        token = login(client)
        page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep['id']}"))
    assert one(page, "#sweep-best").get_text(" ", strip=True).startswith("Best complete run:")
    assert one(page, "#sweep-best")["data-run-id"] == str(first["run_id"])
    # The rule names what makes a run partial (errors, queries not run), not unrated ones.
    rule = one(page, "#sweep-partial-rule").get_text(" ", strip=True)
    assert rule.startswith("A run in which a query errored or was not run is partial")
    assert "unscored" not in rule and "Unrated queries make no run partial" in rule
    # Applying the best asks for no confirmation: it goes straight to the case page.
    applied = client.post(
        f"/cases/{case_id}/sweeps/{sweep['id']}/apply",
        data={"csrf_token": token, "run_id": str(first["run_id"])},
        follow_redirects=False,
    )
    assert applied.status_code == 303, applied.text
    assert api.get(f"/api/v1/cases/{case_id}").json()["knobs"] == {"k": 1.0}
    case_page = soup(client.get(f"/cases/{case_id}"))
    badge = one(case_page, "#case-score")
    assert badge.select_one(".score-partial") is None
    assert one(badge, ".score-rated").get_text(strip=True) == "· 23 of 25 queries rated"
