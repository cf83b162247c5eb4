"""A sweep of a case with several metrics lists each combination's other metrics."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.api import scorer_id
from tests.support.pages import login, one, soup
from tests.support.sweeps import rated_case as rated_case  # the fixture

pytestmark = pytest.mark.runner  # starts runs (and sweeps)


def test_each_combination_carries_the_other_metrics_it_scored(
    api: ApiUser, client: TestClient, rated_case: dict[str, Any]
) -> None:
    case_id = rated_case["id"]
    p10, err = scorer_id(api, "P@10"), scorer_id(api, "ERR@10")
    patch = api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [p10, err]})
    assert patch.status_code == 200, patch.text
    response = api.post(
        f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"g": [0, 50], "t": [1]}}
    )
    assert response.status_code == 200, response.text
    sweep = response.json()
    for result in sweep["results"]:
        # The primary is the case score; the others re-scored like it, in the case's order.
        assert [(m["scorer_id"], m["name"]) for m in result["metrics"]] == [
            (p10, "P@10"),
            (err, "ERR@10"),
        ]
        run = api.get(f"/api/v1/cases/{case_id}/runs/{result['run_id']}").json()
        live = {m["scorer_id"]: (m["case_score"], m["scored"]) for m in run["metrics"]}
        for metric in result["metrics"]:
            assert (metric["case_score"], metric["scored"]) == live[metric["scorer_id"]]
        assert live[run["scorer_id"]][0] == pytest.approx(result["case_score"])
    assert sweep["results"][0]["metrics"] != sweep["results"][1]["metrics"]  # the knob matters
    login(client)
    page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep['id']}"))
    heads = [th.get_text(strip=True) for th in page.select("#sweep-table th.metric-name")]
    assert heads == ["P@10 · mean", "ERR@10 · mean"]
    assert one(page, "#sweep-primary-header").get_text(strip=True) == "NDCG@10 · mean"
    first = sweep["results"][0]
    row = one(page, f"#sweep-table tr[data-run-id='{first['run_id']}']")
    shown = [td.get_text(strip=True) for td in row.select("td.metric-score")]
    assert shown == [str(round(m["case_score"])) for m in first["metrics"]]


def test_every_column_is_re_scored_with_todays_weights(
    api: ApiUser, client: TestClient, rated_case: dict[str, Any]
) -> None:
    case_id = rated_case["id"]
    p10 = scorer_id(api, "P@10")
    api.patch(f"/api/v1/cases/{case_id}", json={"metric_scorer_ids": [p10]})
    sweep = api.post(
        f"/api/v1/cases/{case_id}/sweeps?wait=true", json={"knobs": {"g": [0, 50], "t": [1]}}
    ).json()
    # After the sweep: one query weighs 9 and the case averages by weight.
    queries = api.get(f"/api/v1/cases/{case_id}/queries").json()
    api.patch(f"/api/v1/cases/{case_id}/queries/{queries[0]['id']}", json={"weight": 9})
    assert api.patch(f"/api/v1/cases/{case_id}", json={"aggregate": "weighted_mean"}).is_success
    url = f"/api/v1/cases/{case_id}/sweeps/{sweep['id']}"
    again = api.get(url).json()
    assert again["metric"] == "NDCG@10" and again["aggregate"] == "weighted_mean"
    changed = False
    for before, now in zip(sweep["results"], again["results"], strict=True):
        run = api.get(f"/api/v1/cases/{case_id}/runs/{now['run_id']}").json()
        live = {m["scorer_id"]: m["case_score"] for m in run["metrics"]}
        # Both columns of a row are of one kind: today's weighted mean, as the run shows it.
        assert now["case_score"] == pytest.approx(live[run["scorer_id"]])
        assert now["metrics"][0]["case_score"] == pytest.approx(live[p10])
        changed |= now["metrics"][0]["case_score"] != pytest.approx(
            before["metrics"][0]["case_score"]
        )
    assert changed  # the weights moved P@10 too, not only the primary column
    login(client)
    page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep['id']}"))
    assert one(page, "#sweep-primary-header").get_text(strip=True) == "NDCG@10 · weighted mean"
    heads = [th.get_text(strip=True) for th in page.select("#sweep-table th.metric-name")]
    assert heads == ["P@10 · weighted mean"]
