"""Judgements from clicks into a book: worked COEC numbers, the minimum, the simulator's
order, and the clicks rater in the book's pairs and agreement beside people."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from app.clicks.judging import to_scale
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.books import make_book
from tests.support.click_sim import make_world, simulate
from tests.support.clicks import make_log, send_events, ubi_event
from tests.support.pages import login, one, soup

# The COEC worked example of tests/clicks/test_click_models.py, as UBI events: A, B, C are
# shown in seven searches; CTR at rank 1 is 1/3, at rank 2 is 1/4.
COEC_LOG = [("s0", "A", 1, True), ("s1", "A", 1, False), ("s2", "B", 2, True),
            ("s3", "B", 2, False), ("s4", "B", 1, False), ("s5", "A", 2, False),
            ("s6", "C", 2, False)]  # fmt: skip


def coec_events() -> list[dict[str, Any]]:
    events = []
    for search, doc, rank, clicked in COEC_LOG:
        events.append(ubi_event(search, "shoes", doc, rank, "impression"))
        if clicked:
            events.append(ubi_event(search, "shoes", doc, rank, "click"))
    return events


def test_coec_judgements_with_thresholds_and_provenance(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    send_events(api, log_id, coec_events())
    book = make_book(api, scale=[0, 1, 2])
    body = {"book_id": book["id"], "model": "coec", "min_impressions": 1, "mapping": "thresholds"}
    result = api.post(
        f"/api/v1/click-logs/{log_id}/judgements", json={**body, "thresholds": [0.5, 1.1]}
    )
    assert result.status_code == 202, result.text
    done = result.json()
    assert done["pairs_judged"] == 3 and done["pairs_created"] == 3
    assert done["impressions"] == "events" and done["rater"]["kind"] == "clicks"
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    by_doc = {p["doc_id"]: p["judgements"][0] for p in pairs}
    # A: 1 / (1/3 + 1/3 + 1/4) = 1.0909 -> 1; B: 1 / (1/4 + 1/4 + 1/3) = 1.2 -> 2; C: 0 -> 0.
    assert {d: j["rating"] for d, j in by_doc.items()} == {"A": 1, "B": 2, "C": 0}
    assert round(by_doc["A"]["estimate"], 4) == 1.0909
    assert round(by_doc["B"]["expected_clicks"], 4) == 0.8333
    assert by_doc["B"]["impressions"] == 3 and by_doc["B"]["clicks"] == 1
    assert (
        by_doc["A"]["model"] == "coec" and by_doc["A"]["ci_low"] < 1.0909 < by_doc["A"]["ci_high"]
    )
    # C was shown once: with three impressions asked for, it stays unjudged (its old rating goes).
    again = api.post(
        f"/api/v1/click-logs/{log_id}/judgements",
        json={**body, "thresholds": [0.5, 1.1], "min_impressions": 3},
    ).json()
    assert again["pairs_judged"] == 2 and again["pairs_below_minimum"] == 1
    judged = {p["doc_id"]: len(p["judgements"]) for p in api.get(
        f"/api/v1/books/{book['id']}/pairs").json()}  # fmt: skip
    assert judged == {"A": 1, "B": 1, "C": 0}


def test_bad_judgement_requests(api: ApiUser, other_api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    book = make_book(api, scale=[0, 1, 2])
    url = f"/api/v1/click-logs/{log_id}/judgements"
    bad = {"book_id": book["id"], "model": "coec", "mapping": "thresholds", "thresholds": [1]}
    assert api.post(url, json=bad).status_code == 422
    assert api.post(url, json={**bad, "thresholds": [2, 1]}).status_code == 422
    assert api.post(url, json={"book_id": book["id"], "model": "ubm"}).status_code == 422
    other_book = make_book(other_api)
    assert api.post(url, json={"book_id": other_book["id"], "model": "coec"}).status_code == 404


def _simulated_events(seed: int) -> tuple[list[dict[str, Any]], np.ndarray]:
    world = make_world(seed, queries=2, docs=4)
    log = simulate(world, sessions=1500, seed=seed, model="pbm")
    events = []
    for s, p, r, v in zip(log.session, log.pair, log.rank, log.value, strict=True):
        query, doc = divmod(int(p), 4)
        args = (f"s{s}", f"query {query}", f"doc {doc}", int(r) - 1)
        events.append(ubi_event(*args, "impression"))
        if v:
            events.append(ubi_event(*args, "click"))
    return events, world.attract


def test_pbm_judgements_follow_the_true_order(api: ApiUser) -> None:
    log_id = make_log(api, position_base=0)["id"]
    events, truth = _simulated_events(7)
    send_events(api, log_id, events)
    book = make_book(api, scale=[0, 1, 2, 3])
    result = api.post(
        f"/api/v1/click-logs/{log_id}/judgements", json={"book_id": book["id"], "model": "pbm"}
    ).json()
    assert result["pairs_judged"] == 8 and result["ratings"] == {"1": 3, "2": 2, "3": 3}
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    estimate = {(p["query_text"], p["doc_id"]): p["judgements"][0]["estimate"] for p in pairs}
    for q in range(2):
        got = [estimate[(f"query {q}", f"doc {d}")] for d in range(4)]
        assert np.argsort(got)[::-1].tolist() == np.argsort(truth[q])[::-1].tolist()


def test_clicks_rater_is_calibrated_beside_people(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    send_events(api, log_id, coec_events())
    book = make_book(api, scale=[0, 1, 2])
    body = {"book_id": book["id"], "model": "coec", "min_impressions": 1}
    rater = api.post(
        f"/api/v1/click-logs/{log_id}/judgements",
        json={**body, "mapping": "thresholds", "thresholds": [0.5, 1.1]},
    ).json()["rater"]
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    person = {"A": 1, "B": 2, "C": 1}
    for pair in pairs:
        rating = {"rating": person[pair["doc_id"]]}
        put = api.put(f"/api/v1/books/{book['id']}/pairs/{pair['id']}/judgement", json=rating)
        assert put.status_code == 200, put.text
    agreement = api.get(f"/api/v1/books/{book['id']}/agreement").json()
    assert {"kind": "clicks", "id": rater["id"], "name": rater["name"]} in agreement["rater_list"]
    (clicks,) = agreement["clicks"]
    assert clicks["judge_id"] == rater["id"] and clicks["pairs"] == 3
    # People's majority (rows) against the clicks rater (columns): C is 1 for the person, 0 here.
    assert clicks["confusion"] == [[0, 0, 0], [1, 1, 0], [0, 0, 1]]
    assert agreement["judges"] == []


def test_book_page_shows_the_clicks_rater(api: ApiUser, client: TestClient) -> None:
    log_id = make_log(api)["id"]
    send_events(api, log_id, coec_events())
    book = make_book(api, scale=[0, 1, 2])
    body = {"book_id": book["id"], "model": "sdbn", "min_impressions": 1}
    rater = api.post(f"/api/v1/click-logs/{log_id}/judgements", json=body).json()["rater"]
    login(client)
    page = soup(client.get(f"/books/{book['id']}"))
    row = one(page, f"#clicks-agreement tr[data-click-rater-id='{rater['id']}']")
    assert row.td is not None and row.td.get_text() == "clicks SDBN: shop"


def test_impressions_from_hit_ids_when_there_are_no_impression_events(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    hits = {"s1": ["A", "B", "C"], "s2": ["A", "B", "C"], "s3": ["B", "A"]}
    queries = [
        {"query_id": q, "user_query": "shoes", "query_response_hit_ids": h} for q, h in hits.items()
    ]
    assert api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries).json()["stored"] == 3
    send_events(api, log_id, [ubi_event(q, "shoes", "B", 2, "click") for q in ("s1", "s2")])
    book = make_book(api, scale=[0, 1])
    body = {"book_id": book["id"], "model": "coec", "min_impressions": 3}
    done = api.post(f"/api/v1/click-logs/{log_id}/judgements", json=body).json()
    assert done["impressions"] == "hit_ids" and done["pairs_judged"] == 2
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    found = {p["doc_id"]: p["judgements"] for p in pairs}
    # CTR: rank 1 0/3, rank 2 2/3. B: 2 clicks / (2/3 + 2/3 + 0) = 1.5; A: 0; C (2 shown) unjudged.
    assert round(found["B"][0]["estimate"], 4) == 1.5 and found["B"][0]["impressions"] == 3
    assert found["A"][0]["estimate"] == 0 and "C" not in found
    assert (found["A"][0]["rating"], found["B"][0]["rating"]) == (0, 1)


def test_quantiles_keep_the_lowest_rating_for_pairs_never_clicked() -> None:
    estimates = np.array([0.0, 0.0, 0.0, 0.0, 0.2, 0.5, 0.5, 0.9, 1.4, 0.1])
    ratings = to_scale(estimates, [0, 1, 2, 3], thresholds=None)
    # Six clicked pairs over ratings 1-3, two each by rank; the two 0.5s share one rating.
    assert ratings.tolist() == [0, 0, 0, 0, 1, 2, 2, 3, 3, 1]
    assert to_scale(estimates, [0, 1, 2], thresholds=[0.3, 1.0]).tolist() == [
        0, 0, 0, 0, 0, 1, 1, 1, 2, 0,
    ]  # fmt: skip


def test_an_empty_log_judges_nothing(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    book = make_book(api)
    for model in ("coec", "pbm", "sdbn", "dbn"):
        body = {"book_id": book["id"], "model": model}
        done = api.post(f"/api/v1/click-logs/{log_id}/judgements", json=body)
        assert done.status_code == 202, done.text
        assert (done.json()["impressions"], done.json()["pairs_judged"]) == ("none", 0)


def test_dates_and_application_narrow_the_log(api: ApiUser) -> None:
    log_id = make_log(api)["id"]
    send_events(api, log_id, coec_events())  # all at 2025-02-01T10:00:00Z, no application
    book = make_book(api)
    url = f"/api/v1/click-logs/{log_id}/judgements"
    body = {"book_id": book["id"], "model": "coec", "min_impressions": 1}
    assert api.post(url, json={**body, "since": "2025-02-01T10:00:00Z"}).json()["pairs_judged"] == 3
    assert api.post(url, json={**body, "until": "2025-02-01T10:00:00Z"}).json()["pairs_judged"] == 0
    assert api.post(url, json={**body, "application": "shop"}).json()["pairs_judged"] == 0


def test_clicks_rater_syncs_into_a_case_like_a_judge(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    log_id = make_log(api)["id"]
    send_events(api, log_id, coec_events())
    book = make_book(api, scale=[0, 1, 2])
    body = {"book_id": book["id"], "model": "coec", "min_impressions": 1, "mapping": "thresholds"}
    judged = api.post(
        f"/api/v1/click-logs/{log_id}/judgements", json={**body, "thresholds": [0.5, 1.1]}
    ).json()
    rater_id = judged["rater"]["id"]
    # Someone rated A as 2 in the book too: syncing the clicks rater ignores that.
    pairs = {p["doc_id"]: p["id"] for p in api.get(f"/api/v1/books/{book['id']}/pairs").json()}
    rated = api.put(f"/api/v1/books/{book['id']}/pairs/{pairs['A']}/judgement", json={"rating": 2})
    assert rated.status_code in (200, 201), rated.text
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    case_id = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))["id"]
    qids = add_queries(api, case_id, ["shoes", "boots"])
    url = f"/api/v1/cases/{case_id}/books/{book['id']}/sync"
    result = api.post(url, json={"method": "rater", "clicks_rater_id": rater_id})
    assert result.status_code == 200, result.text
    assert result.json() == {"ratings_set": 3, "ratings_unchanged": 0, "pairs_without_query": 0}
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['shoes']}/ratings").json()
    # COEC with thresholds 0.5 and 1.1: A 1.09 -> 1, B 1.2 -> 2, C 0 -> 0.
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == {"A": 1, "B": 2, "C": 0}
    again = api.post(url, json={"method": "rater", "clicks_rater_id": rater_id}).json()
    assert again == {"ratings_set": 0, "ratings_unchanged": 3, "pairs_without_query": 0}
    # The case names the click model as the source, not "a former rater".
    source = api.get(f"/api/v1/pages/cases/{case_id}").json()["ratings_source"]
    assert (source["rater_kind"], source["rater_name"]) == ("clicks", judged["rater"]["name"])
    assert source["rater_name"].startswith("clicks COEC")
    login(client)
    line = one(soup(client.get(f"/cases/{case_id}")), "#ratings-source")
    text = line.get_text(" ", strip=True)
    assert f"the judgements of the click model {judged['rater']['name']}" in text
    assert "former rater" not in text and line["data-rater-kind"] == "clicks"
    # The person's rating is what "mean" of people syncs, the clicks rater left out.
    mean = api.post(url, json={"method": "mean"}).json()
    assert mean["ratings_set"] == 1
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['shoes']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]}["A"] == 2
    # One rater only; another book's rater, or none, is refused.
    both = {"method": "rater", "clicks_rater_id": rater_id, "judge_id": 1}
    assert api.post(url, json=both).status_code == 422
    not_rater = {"method": "mean", "clicks_rater_id": rater_id}
    assert api.post(url, json=not_rater).status_code == 422
    other_book = make_book(api, scale=[0, 1, 2])
    elsewhere = f"/api/v1/cases/{case_id}/books/{other_book['id']}/sync"
    assert (
        api.post(elsewhere, json={"method": "rater", "clicks_rater_id": rater_id}).status_code
        == 404
    )
    assert api.post(url, json={"method": "rater", "clicks_rater_id": 10**12}).status_code == 404
    # Another user cannot sync into a case they cannot see.
    theirs = other_api.post(url, json={"method": "rater", "clicks_rater_id": rater_id})
    assert theirs.status_code == 404
