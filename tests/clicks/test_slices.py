"""Zero-result and low click-through queries as slices: worked counts, over the API and page."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.clicks import make_log, send_events, ubi_event
from tests.support.pages import login, one, soup


def _query(key: str, text: str, hits: list[str] | None) -> dict[str, Any]:
    record: dict[str, Any] = {"query_id": key, "user_query": text, "application": "shop"}
    if hits is not None:
        record["query_response_hit_ids"] = hits
    return record


def _shop(api: ApiUser) -> int:
    log_id = int(make_log(api)["id"])
    queries = [
        # "shoes": 4 searches, 1 found nothing, 1 of the other 3 clicked: CTR 1/3.
        _query("s1", "shoes", ["A", "B"]),
        _query("s2", "shoes", ["A"]),
        _query("s3", "shoes", ["B"]),
        _query("s4", "shoes", []),
        # "xyzzy": 2 searches, both found nothing.
        _query("x1", "xyzzy", []),
        _query("x2", "xyzzy", []),
        # "socks": 3 searches with hits, none clicked: CTR 0.
        _query("k1", "socks", ["C"]),
        _query("k2", "socks", ["C"]),
        _query("k3", "socks", ["D"]),
        # "hats": 1 search, clicked: CTR 1.
        _query("h1", "hats", ["E"]),
    ]
    stored = api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries).json()
    assert stored["stored"] == 10
    send_events(
        api,
        log_id,
        [ubi_event("s1", "shoes", "A", 1, "click"), ubi_event("h1", "hats", "E", 1, "click")],
    )
    return log_id


def test_slices_count_zero_results_and_click_through(api: ApiUser) -> None:
    log_id = _shop(api)
    got = api.get(f"/api/v1/click-logs/{log_id}/slices", params={"max_ctr": 0.4}).json()
    zero = [(q["text"], q["searches"], q["zero_result_searches"]) for q in got["zero_results"]]
    assert zero == [("shoes", 4, 1), ("xyzzy", 2, 2)]
    low = [(q["text"], q["clicked_searches"], q["ctr"]) for q in got["low_ctr"]]
    # By searches, most first: shoes (4) before socks (3).
    assert low[1] == ("socks", 0, 0.0)
    assert low[0][0:2] == ("shoes", 1) and abs(low[0][2] - 1 / 3) < 1e-9
    assert len(low) == 2 and got["low_ctr_total"] == 2
    # xyzzy showed nothing, so it has no click-through at all.
    assert got["zero_results"][1]["ctr"] is None
    strict = api.get(
        f"/api/v1/click-logs/{log_id}/slices", params={"max_ctr": 0.1, "min_searches": 3}
    ).json()
    assert [q["text"] for q in strict["low_ctr"]] == ["socks"]
    assert [q["text"] for q in strict["zero_results"]] == ["shoes"]
    one_only = api.get(f"/api/v1/click-logs/{log_id}/slices", params={"limit": 1}).json()
    assert len(one_only["zero_results"]) == 1 and one_only["zero_results_total"] == 2
    elsewhere = api.get(
        f"/api/v1/click-logs/{log_id}/slices", params={"application": "other"}
    ).json()
    assert elsewhere["zero_results"] == [] and elsewhere["low_ctr"] == []
    bad = api.get(f"/api/v1/click-logs/{log_id}/slices", params={"max_ctr": 2})
    assert bad.status_code == 422
    assert api.get("/api/v1/click-logs/999999/slices").status_code == 404


def test_searches_without_impressions_found_nothing_in_an_events_log(api: ApiUser) -> None:
    log_id = int(make_log(api)["id"])
    api.post(
        f"/api/v1/click-logs/{log_id}/queries",
        json=[_query("a1", "lamp", None), _query("a2", "lamp", None), _query("b1", "desk", None)],
    )
    send_events(
        api,
        log_id,
        [
            ubi_event("a1", "lamp", "L", 1, "impression"),
            ubi_event("b1", "desk", "D", 1, "impression"),
            ubi_event("b1", "desk", "D", 1, "click"),
        ],
    )
    got = api.get(f"/api/v1/click-logs/{log_id}/slices").json()
    assert [(q["text"], q["zero_result_searches"]) for q in got["zero_results"]] == [("lamp", 1)]
    assert [(q["text"], q["ctr"]) for q in got["low_ctr"]] == [("lamp", 0.0)]


def test_slices_listed_on_the_log_page(api: ApiUser, client: TestClient) -> None:
    log_id = _shop(api)
    login(client)
    page = soup(client.get(f"/click-logs/{log_id}"))
    zero = [
        (tr["data-text"], one(tr, ".zero").get_text())
        for tr in page.select("#zero-results tbody tr")
    ]
    assert zero == [("shoes", "1"), ("xyzzy", "2")]
    low = [(tr["data-text"], one(tr, ".ctr").get_text()) for tr in page.select("#low-ctr tbody tr")]
    assert low == [("socks", "0.0%")]
    twin = client.get(str(one(page, "link[rel=alternate]")["href"])).json()
    assert [q["text"] for q in twin["slices"]["low_ctr"]] == ["socks"]
