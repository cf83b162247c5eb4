"""Relevo → Quepid case file → Relevo keeps the case: scorer, metrics, aggregate, tags, weights."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, scorer_id
from tests.support.quepid import export, fixture, imported, queries_of


def _static_endpoint(api: ApiUser) -> int:
    response = api.post("/api/v1/search-endpoints", json={"name": "offline", "engine": "static"})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()
    assert run["status"] == "finished", run
    return run


def _scores(api: ApiUser, run: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Return each query's score and every metric's, the metrics by scorer name."""
    names = {m["scorer_id"]: m["name"] for m in run["metrics"]}
    return {
        q["text"]: {
            "score": q["score"],
            **{names[int(i)]: v for i, v in q["metric_scores"].items()},
        }
        for q in run["queries"]
    }


def _query(api: ApiUser, case_id: int, text: str, tags: list[str], weight: float) -> int:
    body = {"text": text, "tags": tags, "weight": weight}
    response = api.post(f"/api/v1/cases/{case_id}/queries", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


@pytest.mark.runner
def test_a_case_comes_back_from_a_quepid_file_with_the_same_scores(
    api: ApiUser, other_api: ApiUser
) -> None:
    endpoint_id = _static_endpoint(api)
    mine = api.post(
        "/api/v1/scorers",
        json={
            "name": "nDCG@5 exponential",
            "kind": "ndcg",
            "params": {"k": 5, "gain": "exponential"},
            "scale": [0, 1, 2, 3],
        },
    )
    assert mine.status_code == 201, mine.text
    metrics = [scorer_id(api, "ERR@10"), int(mine.json()["id"])]
    case = make_case(
        api,
        endpoint_id,
        name="Round trip",
        scorer_id=scorer_id(api, "NDCG@10"),
        field_spec="id:id",
        metric_scorer_ids=metrics,
        aggregate="weighted_mean",
    )
    case_id = int(case["id"])
    batman = _query(api, case_id, "batman", ["head", "hero"], 3.0)
    alien = _query(api, case_id, "alien", ["tail"], 0.5)
    plain = _query(api, case_id, "plain", [], 1.0)
    run_file = "\n".join(
        [
            "batman Q0 b1 1 4 sys",
            "batman Q0 b2 2 3 sys",
            "batman Q0 b3 3 2 sys",
            "batman Q0 b4 4 1 sys",
            "alien Q0 a1 1 2 sys",
            "alien Q0 a2 2 1 sys",
            "plain Q0 p1 1 1 sys",
            "",
        ]
    )
    uploaded = api.put(
        f"/api/v1/search-endpoints/{endpoint_id}/results",
        params={"format": "trec"},
        content=run_file.encode(),
        headers={"Content-Type": "text/plain"},
    )
    assert uploaded.status_code == 200, uploaded.text
    for query_id, ratings in (
        (batman, {"b1": 1, "b2": 3, "b4": 2, "b9": 3}),
        (alien, {"a2": 3, "a1": 0}),
        (plain, {"p1": 2}),
    ):
        body = {"ratings": [{"doc_id": d, "rating": r} for d, r in ratings.items()]}
        assert api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body).is_success
    before = _run(api, case_id)

    out = export(api, case_id)
    extras = out["options"]["relevo"]
    assert extras["aggregate"] == "weighted_mean"
    assert extras["scorer"]["kind"] == "ndcg" and extras["scorer"]["name"] == "NDCG@10"
    assert [m["name"] for m in extras["metrics"]] == ["ERR@10", "nDCG@5 exponential"]
    by_text = {q["query_text"]: q["options"] for q in out["queries"]}
    assert by_text["batman"] == {"relevo": {"tags": ["head", "hero"], "weight": 3}}
    assert by_text["plain"] is None

    again = imported(api, out)
    assert again["scorer_id"] == case["scorer_id"]  # the preset itself, not Quepid's nDCG@10
    assert again["metric_scorer_ids"] == metrics  # the same scorers, reused
    assert again["aggregate"] == "weighted_mean"
    assert again["options"] == case["options"]  # "relevo" is read, not kept as an option
    queries = api.get(f"/api/v1/cases/{again['id']}/queries").json()
    assert [(q["text"], q["tags"], q["weight"], q["options"]) for q in queries] == [
        ("batman", ["head", "hero"], 3.0, {}),
        ("alien", ["tail"], 0.5, {}),
        ("plain", [], 1.0, {}),
    ]
    after = _run(api, int(again["id"]))
    assert _scores(api, after) == _scores(api, before)
    assert after["case_score"] == pytest.approx(before["case_score"])
    assert [m["case_score"] for m in after["metrics"]] == pytest.approx(
        [m["case_score"] for m in before["metrics"]]
    )
    assert 0 < before["case_score"] < 100
    assert export(api, int(again["id"]))["options"] == out["options"]

    # Someone without those scorers gets the preset and a copy of the custom one.
    theirs = imported(other_api, out)
    assert theirs["scorer_id"] == case["scorer_id"]
    assert theirs["metric_scorer_ids"][0] == metrics[0]
    copy = other_api.get(f"/api/v1/scorers/{theirs['metric_scorer_ids'][1]}").json()
    assert (copy["name"], copy["kind"], copy["params"]["k"], copy["params"]["gain"]) == (
        "nDCG@5 exponential",
        "ndcg",
        5,
        "exponential",
    )


def test_an_import_keeps_twenty_tags_and_says_what_it_left_out(api: ApiUser) -> None:
    data = fixture("movies_es_case.json")
    many = [f"t{i}" for i in range(21)]
    # Relevo's own export of a query with 21 tags (the cap is 20), and Quepid's own options
    # with a tag too long and a weight that is not a number > 0.
    data["queries"][0]["options"] = {"relevo": {"tags": many, "weight": 2}}
    data["queries"][1]["options"] = {"tags": ["ok", "x" * 41], "weight": -1}
    result = imported(api, data)
    by_text = {q["text"]: q for q in queries_of(api, int(result["id"]))}
    assert by_text["star wars"]["tags"] == many[:20] and by_text["star wars"]["weight"] == 2.0
    assert by_text["batman"]["tags"] == ["ok"] and by_text["batman"]["weight"] == 1.0
    warned = [w for w in result["warnings"] if w.startswith("Query ")]
    assert warned == [
        'Query "star wars": it has 21 tags; a query keeps at most 20: t20 were left out.',
        'Query "batman": 1 tag(s) longer than 40 characters or not text were left out '
        f"('{'x' * 20}'…); its weight -1 is not a number greater than 0: it weighs 1.",
    ]
