"""The click log page's forms: the judgement estimate and form, the sampler's preview and add."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.clicks.test_judgements import coec_events
from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint
from tests.support.books import make_book
from tests.support.clicks import make_log, send_events
from tests.support.pages import login, one, soup


def test_estimate_then_judge_from_the_page(api: ApiUser, client: TestClient) -> None:
    log_id = make_log(api)["id"]
    # A and B are shown three times each, C once (the COEC worked example).
    send_events(api, log_id, coec_events())
    book = make_book(api, scale=[0, 1, 2])
    token = login(client)
    page = soup(client.get(f"/click-logs/{log_id}"))
    assert page.select("#judge-estimate") == []
    form = one(page, "#judge-estimate-form")
    assert form["method"] == "get"
    page = soup(client.get(f"/click-logs/{log_id}", params={"min_impressions": 3}))
    assert one(page, "#judge-estimate .qualifying").get_text() == "2"
    assert one(page, "#judge-estimate .seen").get_text() == "3"
    api_twin = api.get(
        f"/api/v1/click-logs/{log_id}/judgements/estimate", params={"min_impressions": 3}
    ).json()
    assert (api_twin["pairs_qualifying"], api_twin["pairs_seen"]) == (2, 3)
    # At rank 1 only: A was shown there twice, B once.
    ranked = api.get(
        f"/api/v1/click-logs/{log_id}/judgements/estimate",
        params={"min_impressions": 2, "max_rank": 1},
    ).json()
    assert (ranked["pairs_qualifying"], ranked["pairs_seen"]) == (1, 2)
    judge_form = one(page, "#judge-form")
    assert one(judge_form, "input[name=min_impressions]")["value"] == "3"
    answer = client.post(
        str(judge_form["action"]),
        data={
            "csrf_token": token,
            "book_id": str(book["id"]),
            "model": "coec",
            "min_impressions": "3",
            "max_rank": "20",
        },
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert answer.headers["location"].endswith(f"/books/{book['id']}")
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    judged = {p["doc_id"] for p in pairs if p["judgements"]}
    assert judged == {"A", "B"}  # C was shown once: unjudged
    bad = client.get(f"/click-logs/{log_id}", params={"min_impressions": 0})
    assert bad.status_code == 422
    assert one(soup(bad), "[data-field='estimate.min_impressions']").get_text()
    wrong = client.post(
        str(judge_form["action"]),
        data={"csrf_token": token, "book_id": "999999", "model": "coec"},
        follow_redirects=False,
    )
    assert wrong.status_code == 404


def test_sampler_previews_then_adds_the_same_sample(api: ApiUser, client: TestClient) -> None:
    log_id = make_log(api)["id"]
    counts = {"a": 5, "b": 3, "c": 1, "d": 1}
    queries = [
        {"query_id": f"{t}{i}", "user_query": t} for t, n in counts.items() for i in range(n)
    ]
    api.post(f"/api/v1/click-logs/{log_id}/queries", json=queries)
    case_id = make_case(api, make_endpoint(api, "http://127.0.0.1:9/movies")["id"])["id"]
    token = login(client)
    # No seed given: the preview draws one and shows it; adding sends it on.
    page = soup(client.get(f"/click-logs/{log_id}", params={"design": "pps", "size": 2}))
    preview = one(page, "#sample-preview")
    rows = {tr["data-text"]: tr for tr in preview.select("tbody tr")}
    assert len(rows) == 2 and "a" in rows
    assert one(rows["a"], ".pi").get_text() == "1"
    assert one(rows["a"], ".weight").get_text() == "5"
    add = one(page, "#sample-add-form")
    assert one(add, "input[name=seed]")["value"] == preview["data-seed"]
    data = {
        str(i["name"]): str(i.get("value", ""))
        for i in add.select("input")
        if i.get("name") is not None
    }
    answer = client.post(
        str(add["action"]), data={**data, "case_id": str(case_id)}, follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"].endswith(f"/cases/{case_id}")
    assert data["csrf_token"] == token
    stored = {q["text"]: q for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    assert set(stored) == set(rows)
    for text, tr in rows.items():
        assert f"{stored[text]['inclusion_probability']:.4g}" == one(tr, ".pi").get_text()
        assert stored[text]["tags"] == ["sample:pps"]
    bad = client.get(f"/click-logs/{log_id}", params={"design": "pps", "size": 0})
    assert bad.status_code == 422 and one(soup(bad), "[data-field='sample.size']").get_text()
    nowhere = client.post(
        str(add["action"]), data={**data, "case_id": "999999"}, follow_redirects=False
    )
    assert nowhere.status_code == 404
