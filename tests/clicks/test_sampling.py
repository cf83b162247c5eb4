"""Query samplers: worked strata, seeded draws, exact inclusion probabilities, weights."""

from __future__ import annotations

import numpy as np
import pytest

from app.clicks.sampling import draw, pps_probabilities, strata_of
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint
from tests.support.clicks import make_log

FREQ = [50, 30, 10, 5, 5]


def test_strata_by_cumulative_share_of_searches() -> None:
    # Searches before each query: 0%, 50%, 80%, 90%, 95% -> head, torso, tail, tail, tail.
    assert strata_of(np.array(FREQ, dtype=float)).tolist() == [0, 1, 2, 2, 2]


def test_top_takes_the_most_frequent_with_certainty() -> None:
    got = draw(FREQ, design="top", size=2, seed=1)
    assert [(d.index, d.inclusion_probability, d.weight) for d in got] == [
        (0, 1.0, 50.0),
        (1, 1.0, 30.0),
    ]


def test_uniform_is_seeded_and_ignores_frequency() -> None:
    first = draw(FREQ, design="uniform", size=2, seed=4)
    assert [d.index for d in first] == [
        d.index for d in draw(FREQ, design="uniform", size=2, seed=4)
    ]
    assert {d.inclusion_probability for d in first} == {0.4}
    assert [d.weight for d in first] == [FREQ[d.index] / 0.4 for d in first]
    counts = np.zeros(5)
    for seed in range(4000):
        for d in draw(FREQ, design="uniform", size=2, seed=seed):
            counts[d.index] += 1
    # Every distinct query is drawn as often, however frequent.
    assert np.allclose(counts / 4000, 0.4, atol=0.03)


def test_pps_probabilities_are_proportional_and_capped() -> None:
    # 2 of 100 searches: 50 would get π = 1.0 exactly; the rest share the other draw by size.
    pi = pps_probabilities(np.array(FREQ, dtype=float), 2)
    assert np.round(pi, 4).tolist() == [1.0, 0.6, 0.2, 0.1, 0.1]
    capped = pps_probabilities(np.array([90, 5, 3, 2], dtype=float), 2)
    assert np.round(capped, 4).tolist() == [1.0, 0.5, 0.3, 0.2]


def test_pps_draws_match_their_inclusion_probabilities() -> None:
    counts = np.zeros(5)
    for seed in range(4000):
        got = draw(FREQ, design="pps", size=2, seed=seed)
        assert len(got) == 2
        for d in got:
            counts[d.index] += 1
            assert d.weight == pytest.approx(FREQ[d.index] / d.inclusion_probability)
    assert np.allclose(counts / 4000, [1.0, 0.6, 0.2, 0.1, 0.1], atol=0.03)


@pytest.mark.parametrize(("design", "size"), [("uniform", 100), ("pps", 30), ("stratified", 30)])
def test_weighted_mean_estimates_quality_per_search(design: str, size: int) -> None:
    # A uniform sample misses the few heavy queries most of the time: its weighted (ratio)
    # mean is consistent but needs a larger sample to be near the truth.
    rng = np.random.default_rng(0)
    freq = np.maximum(1, (1000 / np.arange(1, 201) ** 1.1).astype(int))
    quality = np.clip(0.9 - np.log(np.arange(1, 201)) / 8 + rng.normal(0, 0.05, 200), 0, 1)
    per_search = float((freq * quality).sum() / freq.sum())
    per_query = float(quality.mean())
    estimates = []
    for seed in range(300):
        got = draw(freq.tolist(), design=design, size=size, seed=seed)  # type: ignore[arg-type]
        w = np.array([d.weight for d in got])
        s = quality[[d.index for d in got]]
        estimates.append(float((w * s).sum() / w.sum()))
    # The per-search mean, not the (lower) per-distinct-query mean.
    assert abs(np.mean(estimates) - per_search) < 0.015 < 0.05 < abs(per_search - per_query)


def test_stratified_sizes_by_stratum() -> None:
    got = draw(FREQ, design="stratified", size=3, seed=2, strata={"head": 1, "tail": 2})
    assert [d.stratum for d in got] == ["head", "tail", "tail"]
    assert [d.inclusion_probability for d in got] == [1.0, 2 / 3, 2 / 3]


def test_sample_over_the_api(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    counts = {"a": 5, "b": 3, "c": 1, "d": 1}
    queries = [
        {"query_id": f"{text}{i}", "user_query": text, "application": "shop"}
        for text, n in counts.items()
        for i in range(n)
    ]
    queries.append({"query_id": "x", "user_query": "elsewhere", "application": "other"})
    assert api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries).json()["stored"] == 11
    url = f"/api/v1/click-logs/{log_id}/sample"
    top = api.post(url, json={"design": "top", "size": 2, "application": "shop"}).json()
    assert (top["population"], top["searches"]) == (4, 10)
    assert [(q["text"], q["frequency"], q["weight"]) for q in top["queries"]] == [
        ("a", 5, 5.0),
        ("b", 3, 3.0),
    ]
    body = {"design": "pps", "size": 2, "seed": 11, "application": "shop"}
    pps = api.post(url, json=body).json()
    assert pps["seed"] == 11 and api.post(url, json=body).json() == pps
    pi = {"a": 1.0, "b": 0.6, "c": 0.2, "d": 0.2}
    assert [round(q["inclusion_probability"], 4) for q in pps["queries"]] == [
        pi[q["text"]] for q in pps["queries"]
    ]
    assert pps["queries"][0]["text"] == "a" and len(pps["queries"]) == 2
    assert api.post(url, json={"design": "random", "size": 2}).status_code == 422
    assert api.post(url, json={"design": "top", "size": 0}).status_code == 422
    everything = api.post(url, json={"design": "uniform", "size": 50, "seed": 1}).json()
    assert everything["population"] == 5 and len(everything["queries"]) == 5


def test_sample_into_a_case_with_design_weights(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    queries = [
        {"query_id": f"{t}{i}", "user_query": t}
        for t, n in {"a": 6, "b": 2}.items()
        for i in range(n)
    ]
    api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries)
    case_id = make_case(api, make_endpoint(api, "http://127.0.0.1:9/movies")["id"])["id"]
    body = {"click_log_id": log_id, "design": "uniform", "size": 1, "seed": 5}
    added = api.post(f"/api/v1/cases/{case_id}/queries/from-log", json=body)
    assert added.status_code == 200, added.text
    (drawn,) = added.json()["sample"]["queries"]
    # One of two distinct texts: pi = 1/2, weight = its searches / pi.
    assert drawn["inclusion_probability"] == 0.5
    case_queries = api.get(f"/api/v1/cases/{case_id}/queries").json()
    assert [(q["text"], q["weight"], q["tags"]) for q in case_queries] == [
        (drawn["text"], drawn["frequency"] * 2.0, ["sample:uniform"])
    ]
    other = make_log(api)["id"]
    assert (
        api.post(
            "/api/v1/cases/999999/queries/from-log", json={**body, "click_log_id": other}
        ).status_code
        == 404
    )


def test_sampled_queries_keep_their_inclusion_probability(api: ApiUser) -> None:
    # Searches a 5, b 3, c 1, d 1: PPS of 2 gives a pi 1 (certain), b 0.6, c and d 0.2 each,
    # so every design weight (searches / pi) is 5: each sampled query stands for 5 searches.
    log_id = make_log(api)["id"]
    counts = {"a": 5, "b": 3, "c": 1, "d": 1}
    queries = [
        {"query_id": f"{t}{i}", "user_query": t} for t, n in counts.items() for i in range(n)
    ]
    api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries)
    case_id = make_case(api, make_endpoint(api, "http://127.0.0.1:9/movies")["id"])["id"]
    add_queries(api, case_id, ["typed by hand"])
    url = f"/api/v1/cases/{case_id}/queries/from-log"
    pps = api.post(url, json={"click_log_id": log_id, "design": "pps", "size": 2, "seed": 3})
    assert pps.status_code == 200, pps.text
    exact = {"a": 1.0, "b": 0.6, "c": 0.2, "d": 0.2}
    stored = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert stored["typed by hand"]["inclusion_probability"] is None
    assert stored["typed by hand"]["weight"] == 1.0
    sampled = [q for q in stored.values() if "sample:pps" in q["tags"]]
    assert len(sampled) == 2 and "a" in {q["text"] for q in sampled}
    for query in sampled:
        assert query["inclusion_probability"] == pytest.approx(exact[query["text"]])
        assert query["weight"] == pytest.approx(5.0)
    # The Horvitz-Thompson total of searches is exact here: 2 queries x 5 = all 10 searches.
    assert sum(q["weight"] for q in sampled) == pytest.approx(10.0)
    # Sampled again by another design with replace_weights, a query takes that design's
    # probability and weight.
    top = api.post(
        url, json={"click_log_id": log_id, "design": "top", "size": 1, "replace_weights": True}
    ).json()
    assert [q["text"] for q in top["sample"]["queries"]] == ["a"]
    again = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert again["a"]["inclusion_probability"] == 1.0 and again["a"]["weight"] == 5.0
    uniform = api.post(
        url,
        json={
            "click_log_id": log_id,
            "design": "uniform",
            "size": 3,
            "seed": 1,
            "replace_weights": True,
        },
    ).json()
    for drawn in uniform["sample"]["queries"]:
        row = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}[
            drawn["text"]
        ]
        assert row["inclusion_probability"] == pytest.approx(0.75)
        assert row["weight"] == pytest.approx(counts[drawn["text"]] / 0.75)


def _log_of(api: ApiUser, counts: dict[str, int]) -> int:
    log_id = int(make_log(api)["id"])
    queries = [
        {"query_id": f"{t}{i}", "user_query": t} for t, n in counts.items() for i in range(n)
    ]
    api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries)
    return log_id


def test_a_sample_keeps_a_weight_set_by_hand_and_says_so(api: ApiUser) -> None:
    # Searches a 5, b 3, c 1, d 1: PPS of 2 with seed 3 draws "a" (pi 1, design weight 5).
    log_id = _log_of(api, {"a": 5, "b": 3, "c": 1, "d": 1})
    case_id = make_case(api, make_endpoint(api, "http://127.0.0.1:9/movies")["id"])["id"]
    ids = add_queries(api, case_id, ["a"])
    api.patch(f"/api/v1/cases/{case_id}/queries/{ids['a']}", json={"weight": 2})
    url = f"/api/v1/cases/{case_id}/queries/from-log"
    body = {"click_log_id": log_id, "design": "pps", "size": 2, "seed": 3}
    answer = api.post(url, json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["weights_kept"] == [ids["a"]]
    assert answer.json()["weights_replaced"] == []
    stored = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert stored["a"]["weight"] == 2.0 and stored["a"]["tags"] == ["sample:pps"]
    assert stored["a"]["inclusion_probability"] is None
    (other,) = [t for t in stored if t != "a"]
    assert stored[other]["weight"] == pytest.approx(5.0)
    # Asked to, the sample replaces it and lists the query.
    again = api.post(url, json={**body, "replace_weights": True}).json()
    assert again["weights_replaced"] == [ids["a"]] and again["weights_kept"] == []
    row = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}["a"]
    assert (row["weight"], row["inclusion_probability"]) == (5.0, 1.0)


def test_a_sample_never_takes_a_query_past_twenty_tags(api: ApiUser) -> None:
    log_id = _log_of(api, {"a": 5, "b": 3, "c": 1, "d": 1})
    case_id = make_case(api, make_endpoint(api, "http://127.0.0.1:9/movies")["id"])["id"]
    ids = add_queries(api, case_id, ["a"])
    tags = [f"t{i}" for i in range(20)]
    api.patch(f"/api/v1/cases/{case_id}/queries/{ids['a']}", json={"tags": tags, "weight": 2})
    url = f"/api/v1/cases/{case_id}/queries/from-log"
    body = {"click_log_id": log_id, "design": "pps", "size": 2, "seed": 3}
    refused = api.post(url, json={**body, "replace_weights": True})
    assert refused.status_code == 422, refused.text
    assert "more than 20 tags" in refused.text and "'a'" in refused.text
    # Nothing changed: not the query, and no other query of the sample was added.
    stored = api.get(f"/api/v1/cases/{case_id}/queries").json()
    assert [(q["text"], q["tags"], q["weight"]) for q in stored] == [("a", tags, 2.0)]
    # The bulk add of a line with tags refuses the same way.
    bulk = api.post(f"/api/v1/cases/{case_id}/queries/bulk", json={"queries": ["a\tmore"]})
    assert bulk.status_code == 422
    assert api.get(f"/api/v1/cases/{case_id}/queries").json()[0]["tags"] == tags
