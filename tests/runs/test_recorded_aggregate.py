"""A run stores the aggregate its recorded scores used when it finished ("mean" or
"weighted_mean"), returns it next to them, and the pages that show a score "as recorded when
the run finished" name it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.flaky_engine import TEMPLATE, flaky_engine
from tests.support.pages import login, one, soup

pytestmark = pytest.mark.runner  # starts runs


def test_each_run_keeps_the_mean_it_finished_with(api: ApiUser, client: TestClient) -> None:
    with flaky_engine(hard={"hard"}) as url:
        endpoint = make_endpoint(api, url)
        case = make_case(
            api,
            endpoint["id"],
            query_template=TEMPLATE,
            knobs={"k": 1},
            scorer_id=scorer_id(api, "NDCG@10"),
        )
        path = f"/api/v1/cases/{case['id']}"
        ids = add_queries(api, case["id"], ["easy", "hard"])
        # "easy" ranks good first (100), "hard" bad first (63.09); "hard" weighs 3.
        assert api.patch(f"{path}/queries/{ids['hard']}", json={"weight": 3}).status_code == 200
        for query_id in ids.values():
            body = {"ratings": [{"doc_id": "good", "rating": 3}]}
            assert api.put(f"{path}/queries/{query_id}/ratings", json=body).status_code == 200
        first = api.post(f"{path}/runs?wait=true").json()
        assert api.patch(path, json={"aggregate": "weighted_mean"}).status_code == 200
        second = api.post(f"{path}/runs?wait=true").json()
        assert api.patch(path, json={"aggregate": "mean"}).status_code == 200

        runs = {r["id"]: r for r in api.get(f"{path}/runs").json()}
        plain, weighted = runs[first["id"]], runs[second["id"]]
        assert plain["recorded_aggregate"] == "mean"
        assert weighted["recorded_aggregate"] == "weighted_mean"
        hard = 100 / 1.5849625007211563
        assert plain["recorded_score"] == pytest.approx((100 + hard) / 2)
        assert weighted["recorded_score"] == pytest.approx((100 + 3 * hard) / 4)
        # case_score follows today's aggregate (mean); the recorded numbers stay.
        assert weighted["case_score"] == pytest.approx((100 + hard) / 2)
        assert api.get(f"{path}/runs/{second['id']}").json()["recorded_aggregate"] == (
            "weighted_mean"
        )

        # The case page's "Recorded when run N finished" names its mean.
        score = api.get(f"/api/v1/pages/cases/{case['id']}/score").json()
        assert (score["run_id"], score["recorded_aggregate"]) == (second["id"], "weighted_mean")
        login(client)
        page = soup(client.get(f"/cases/{case['id']}"))
        recorded = page.select_one("#case-score .recorded-aggregate")
        assert recorded is not None and recorded.get_text(strip=True) == "weighted mean"
        # The history: each recorded score and each run-picker entry names its mean.
        history = api.get(f"/api/v1/pages/cases/{case['id']}/history").json()
        assert [p["aggregate"] for p in history["points"]] == ["mean", "weighted_mean"]
        cells = {
            row["data-run-id"]: one(row, ".run-aggregate").get_text(strip=True)
            for row in page.select("#runs tr[data-run-id]")
        }
        assert cells == {str(first["id"]): "mean", str(second["id"]): "weighted mean"}
        options = [
            o.get_text(" ", strip=True) for o in page.select("#compare-form [name=base] option")
        ]
        assert any("(weighted mean) at finish" in o for o in options)
        assert any("(mean) at finish" in o for o in options)
        chart = page.select_one("#case-history-chart")
        assert chart is not None and "(mean or weighted mean)" in str(chart)
