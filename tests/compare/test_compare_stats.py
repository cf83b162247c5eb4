"""Compare statistics, overlap and the side-by-side view against a real engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from app.scoring.overlap import jaccard, rbo_ext
from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint
from tests.support.compare import _compare, _docs
from tests.support.compare import two_tries as two_tries  # the fixture

pytestmark = pytest.mark.runner  # starts runs (and sweeps)

# Title matches, with comedies lifted by the knob g: changing g reorders the top.
GENRE_TEMPLATE = (
    '{"query": {"bool": {"must": [{"match": {"title": "#$query##"}}], '
    '"should": [{"term": {"genre": {"value": "Comedy", "boost": ##g##}}}]}}}'
)


def _runs(api: ApiUser, case_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    path = f"/api/v1/cases/{case_id}/runs"
    older, newer = sorted(r["id"] for r in api.get(path).json())
    return api.get(f"{path}/{older}").json(), api.get(f"{path}/{newer}").json()


def test_stats_agree_with_scipy_on_the_paired_scores(
    api: ApiUser, two_tries: dict[str, Any]
) -> None:
    case_id = two_tries["case_id"]
    older, newer = _runs(api, case_id)
    data = _compare(api, case_id, base=older["id"], other=newer["id"]).json()
    pairs = [
        (q["base_score"], q["other_score"])
        for q in data["queries"]
        if q["base_status"] == "scored" and q["other_status"] == "scored"
    ]
    st = data["stats"]
    assert st["n"] == len(pairs) == 2  # star wars and star trek are rated in both
    base, other = np.array([b for b, _ in pairs]), np.array([o for _, o in pairs])
    assert st["mean_delta"] == pytest.approx(float((other - base).mean()))
    assert st["mean_base"] == pytest.approx(float(base.mean()))
    assert (st["wins"], st["losses"], st["ties"]) == (0, 1, 1)
    assert st["t_test_p"] == pytest.approx(float(stats.ttest_rel(other, base).pvalue))
    assert st["small_sample"] is True
    assert st["flips"] >= 10_000
    assert 0 < st["randomization_p"] <= 1
    assert "Too few queries" in data["summary"]
    assert "0 better, 1 worse" in data["summary"]


def test_overlap_of_every_query_and_case_means(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id = two_tries["case_id"]
    older, newer = _runs(api, case_id)
    data = _compare(api, case_id, base=older["id"], other=newer["id"]).json()
    k = data["k"]
    base_docs, other_docs = _docs(older), _docs(newer)
    values = []
    for q in data["queries"]:
        if q["query_id"] not in base_docs or q["query_id"] not in other_docs:
            assert q["overlap"] is None  # "alien" is only in the newer run
            continue
        a = [d["id"] for d in base_docs[q["query_id"]]][:k]
        b = [d["id"] for d in other_docs[q["query_id"]]][:k]
        assert b == a[: len(b)] and len(b) <= 5  # the same ranking, cut at 5 rows
        assert q["overlap"]["jaccard"] == pytest.approx(jaccard(a, b))
        assert q["overlap"]["rbo"] == pytest.approx(rbo_ext(a, b))
        values.append(q["overlap"])
    assert data["overlap"]["n"] == len(values) == 3
    assert data["overlap"]["mean_rbo"] == pytest.approx(np.mean([v["rbo"] for v in values]))
    assert data["overlap"]["mean_jaccard"] == pytest.approx(np.mean([v["jaccard"] for v in values]))
    # 5 rows are a prefix of the 10: extrapolated RBO is 1, Jaccard 0.5.
    assert all(v["rbo"] == pytest.approx(1.0) for v in values if v["jaccard"] > 0)
    assert data["overlap"]["changed_most"] == []


def test_side_by_side_marks_moved_new_and_dropped(api: ApiUser, movies_engine: Any) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"], query_template=GENRE_TEMPLATE, knobs={"g": 0})
    query = api.post(f"/api/v1/cases/{case['id']}/queries", json={"text": "love"}).json()
    first = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
    api.patch(f"/api/v1/cases/{case['id']}", json={"knobs": {"g": 50}})
    second = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
    path = f"/api/v1/cases/{case['id']}/runs/compare/queries/{query['id']}"
    response = api.get(path, params={"base": first["id"], "other": second["id"]})
    assert response.status_code == 200, response.text
    data = response.json()
    a = [d["id"] for d in first["queries"][0]["docs"]][: data["k"]]
    b = [d["id"] for d in second["queries"][0]["docs"]][: data["k"]]
    assert a != b
    assert [d["id"] for d in data["base_docs"]] == a
    assert [d["id"] for d in data["other_docs"]] == b
    for d in data["base_docs"]:
        expected = (
            "dropped"
            if d["id"] not in b
            else ("same" if b.index(d["id"]) == a.index(d["id"]) else "moved")
        )
        assert d["mark"] == expected
        assert d["other_rank"] == (b.index(d["id"]) + 1 if d["id"] in b else None)
    for d in data["other_docs"]:
        expected = (
            "new"
            if d["id"] not in a
            else ("same" if b.index(d["id"]) == a.index(d["id"]) else "moved")
        )
        assert d["mark"] == expected
    assert data["overlap"]["rbo"] == pytest.approx(rbo_ext(a, b))


def test_runs_of_another_case_are_404(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id = two_tries["case_id"]
    older, newer = _runs(api, case_id)
    other_case = make_case(api, api.get(f"/api/v1/cases/{case_id}").json()["search_endpoint_id"])
    response = _compare(api, other_case["id"], base=older["id"], other=newer["id"])
    assert response.status_code == 404
    assert "has no run" in response.json()["detail"]
    query_id = two_tries["ids"]["batman"]
    side = api.get(
        f"/api/v1/cases/{other_case['id']}/runs/compare/queries/{query_id}",
        params={"base": older["id"], "other": newer["id"]},
    )
    assert side.status_code == 404
