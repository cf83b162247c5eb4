"""Judge pages through the HTML forms: create, test on pairs, estimate, run, agreement rows."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.books import make_book
from tests.support.pages import attr, login, one, soup

pytestmark = pytest.mark.runner


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def test_judge_pages_from_form_to_run(api: ApiUser, client: TestClient, llm: FakeLLM) -> None:
    book = make_book(api, scale_labels={"0": "Bad", "3": "Perfect"})
    pairs = [
        {"query_text": "q", "doc_id": "good", "fields": {"title": "<b>Good</b>", "grade": 3}},
        {"query_text": "q", "doc_id": "junk", "fields": {"fake": "non_json"}},
    ]
    api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs})
    csrf = login(client)
    bad = client.post(
        "/judges",
        data={"csrf_token": csrf, "name": "", "provider": "openai", "base_url": "x", "model": "m"},
    )
    assert bad.status_code == 422
    assert one(soup(bad), "#error-name").get_text() and one(soup(bad), "#error-base_url")
    created = client.post(
        "/judges",
        data={
            "csrf_token": csrf,
            "name": "Fake GPT",
            "provider": "openai",
            "base_url": f"{llm.url}/v1",
            "model": "gpt-fake",
            "api_key": "sk-page-secret",
            "requests_per_minute": "100000",
            "price_input_per_mtok": "1",
            "price_output_per_mtok": "2",
        },
        follow_redirects=False,
    )
    assert created.status_code == 303, created.text
    judge_url = created.headers["location"]
    page = client.get(judge_url)
    assert "sk-page-secret" not in page.text
    assert "key set" in one(soup(page), ".meta").get_text()
    tested = client.post(
        f"{judge_url}/test", data={"csrf_token": csrf, "book_id": str(book["id"]), "n": "2"}
    )
    rows = soup(tested).select("#test-results tbody tr")
    assert sorted(" ".join(r.get_attribute_list("class")) for r in rows) == ["failed", "rated"]
    rated = one(soup(tested), "#test-results tr.rated")
    assert one(rated, ".test-rating").get_text() == "3"
    assert "&lt;b&gt;Good&lt;/b&gt;" in tested.text  # the doc's markup shows as text
    judge_id = judge_url.rstrip("/").rsplit("/", 1)[1]
    judging = f"/books/{book['id']}/judging"
    estimate = client.post(
        judging,
        data={"csrf_token": csrf, "judge_id": judge_id, "pairs": "all", "action": "estimate"},
    )
    assert one(soup(estimate), "#estimate-calls").get_text() == "2"
    started = client.post(
        judging,
        data={"csrf_token": csrf, "judge_id": judge_id, "pairs": "all", "action": "start"},
        follow_redirects=False,
    )
    assert started.status_code == 303
    run_url = started.headers["location"]
    deadline = time.monotonic() + 20
    while True:
        run_page = soup(client.get(run_url))
        status = one(run_page, "#judge-run-status").get_text()
        if status not in ("queued", "running") or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status == "finished"
    assert one(run_page, "#judge-run-failed").get_text() == "1"
    assert "not JSON" in one(run_page, "#judge-failures .reason").get_text()
    assert run_page.select_one("#judge-run-retry") is not None
    review = soup(client.get(judging))
    assert "failed: " in one(review, "#review-queue tbody tr").get_text()
    book_page = soup(client.get(f"/books/{book['id']}"))
    assert (
        one(book_page, "#judge-agreement tbody tr .verdict")
        .get_text()
        .strip()
        .startswith("Too few pairs")
    )


def test_judging_page_and_its_json_twin_agree(
    api: ApiUser, client: TestClient, llm: FakeLLM
) -> None:
    book = make_book(api)
    api.post(
        f"/api/v1/books/{book['id']}/pairs",
        json={"pairs": [{"query_text": "q", "doc_id": "x", "fields": {"fake": "off_scale"}}]},
    )
    judge = api.post(
        "/api/v1/judges",
        json={
            "name": "J",
            "provider": "openai",
            "base_url": f"{llm.url}/v1",
            "model": "m",
            "requests_per_minute": 100_000,
        },
    ).json()
    run = api.post(f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]}).json()
    deadline = time.monotonic() + 20
    while api.get(f"/api/v1/books/{book['id']}/judge-runs/{run['id']}").json()["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    twin = api.get(f"/api/v1/pages/books/{book['id']}/judging").json()
    assert [r["id"] for r in twin["runs"]] == [run["id"]]
    assert twin["review"][0]["reason"].startswith("failed: the reply's rating 7")
    login(client)
    page = soup(client.get(f"/books/{book['id']}/judging"))
    assert attr(one(page, "link[rel=alternate]"), "href").endswith(
        f"/pages/books/{book['id']}/judging"
    )
    assert [r["data-run-id"] for r in page.select("#judge-runs tbody tr")] == [str(run["id"])]
    assert one(page, "#review-queue tbody tr").get_text().count("failed: the reply's rating 7") == 1
    listed = api.get("/api/v1/pages/judges").json()
    assert [j["id"] for j in listed["judges"]] == [judge["id"]]
