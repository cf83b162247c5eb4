"""What the judge pages show a newcomer: a quick busy trial, titles, unknown costs, a run's
cancel, deleting a judge and every setting on the new-judge form."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.models import Judge, JudgeFailure, JudgeJudgement, JudgeRun
from tests.fixtures.users import ApiUser
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.books import make_book
from tests.support.pages import attr, login, one, soup

pytestmark = pytest.mark.runner


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def make_judge(api: ApiUser, llm: FakeLLM, **extra: Any) -> dict[str, Any]:
    body = {
        "name": "Fake GPT",
        "provider": "openai",
        "base_url": f"{llm.url}/v1",
        "model": "gpt-fake",
        **extra,
    }
    response = api.post("/api/v1/judges", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def add_pairs(api: ApiUser, book_id: int, fields: list[dict[str, Any]]) -> list[int]:
    pairs = [{"query_text": "film", "doc_id": f"d{i}", "fields": f} for i, f in enumerate(fields)]
    assert api.post(f"/api/v1/books/{book_id}/pairs", json={"pairs": pairs}).status_code == 200
    return [p["id"] for p in api.get(f"/api/v1/books/{book_id}/pairs").json()]


def test_a_trial_of_five_pairs_goes_at_once_with_titles_and_unknown_costs(
    api: ApiUser, client: TestClient, llm: FakeLLM
) -> None:
    # The judge keeps the defaults: 60 requests a minute, 4 at once, and no prices.
    judge = make_judge(api, llm)
    book = make_book(api)
    add_pairs(api, book["id"], [{"title": f"Film {i}", "grade": i % 4} for i in range(5)])
    llm.delay_s = 0.3  # each answer takes a while: calls sent at once overlap
    csrf = login(client)
    page = soup(client.get(f"/judges/{judge['id']}"))
    form = one(page, "#judge-test-form")
    # While it waits, the form says what it is doing (relevo.js fills the status line).
    assert attr(form, "data-busy") == "Asking Fake GPT about {n} pairs (up to 4 at once)…"
    assert one(form, ".busy-note").get("role") == "status"
    assert one(page, "#judge-no-prices").get_text() == "no prices set (costs unknown)"
    tested = client.post(
        f"/judges/{judge['id']}/test",
        data={"csrf_token": csrf, "book_id": str(book["id"]), "n": "5"},
    )
    assert tested.status_code == 200
    # Not paced one a second: four calls were under way together (the concurrency).
    assert len(llm.requests) == 5 and llm.most_in_flight == 4
    result = soup(tested)
    rows = result.select("#test-results tbody tr")
    assert [one(r, ".doc-title").get_text() for r in rows] == [f"Film {i}" for i in range(5)]
    assert [one(r, ".doc-id").get_text() for r in rows] == [f"d{i}" for i in range(5)]
    assert {one(r, ".test-cost").get_text() for r in rows} == {"no prices set"}
    assert "no prices set" in one(result, "#test-no-prices").get_text()
    body = api.post(f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"]}).json()
    assert body["priced"] is False
    assert sorted(i["doc_title"] for i in body["items"]) == [f"Film {i}" for i in range(5)]


def test_a_priced_judge_shows_its_costs(api: ApiUser, client: TestClient, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, price_input_per_mtok=1, price_output_per_mtok=2)
    book = make_book(api)
    add_pairs(api, book["id"], [{"grade": 2}])  # no title: the doc id alone
    csrf = login(client)
    tested = soup(
        client.post(
            f"/judges/{judge['id']}/test",
            data={"csrf_token": csrf, "book_id": str(book["id"]), "n": "1"},
        )
    )
    row = one(tested, "#test-results tbody tr")
    assert row.select_one(".doc-title") is None and one(row, ".doc-id").get_text() == "d0"
    cost = float(one(row, ".test-cost").get_text())
    assert cost > 0 and tested.select_one("#test-no-prices") is None
    listed = soup(client.get("/judges"))
    assert one(listed, f"tr[data-judge-id='{judge['id']}'] .prices").get_text() == "1 / 2"


def test_review_queue_titles_come_from_the_synced_cases_title_field(
    api: ApiUser, client: TestClient, db: Session, llm: FakeLLM
) -> None:
    from tests.support.books import judge as judge_pair
    from tests.support.pages import add_queries, movies_case

    judge = make_judge(api, llm)
    book = make_book(api)
    ids = add_pairs(
        api, book["id"], [{"headline": "Star Wars", "title": "not this one"}, {"body": "x"}]
    )
    # A case fed by the book names its docs' title field: that one wins over "title".
    case_id = movies_case(api, field_spec="id:_id title:headline overview")
    add_queries(api, case_id, ["film"])
    judge_pair(api, book["id"], ids[0], 2)
    synced = api.post(f"/api/v1/cases/{case_id}/books/{book['id']}/sync", json={"method": "mean"})
    assert synced.status_code == 200, synced.text
    run = JudgeRun(
        book_id=book["id"], judge_id=judge["id"], status="failed", pairs_mode="all", pair_ids=ids
    )
    db.add(run)
    db.flush()
    for pair_id in ids:
        db.add(JudgeFailure(run_id=run.id, pair_id=pair_id, judge_id=judge["id"], reason="boom"))
    db.commit()
    login(client)
    page = soup(client.get(f"/books/{book['id']}/judging"))
    rows = {r["data-pair-id"]: r for r in page.select("#review-queue tbody tr")}
    assert one(rows[str(ids[0])], ".doc-title").get_text() == "Star Wars"
    assert one(rows[str(ids[0])], ".doc-id").get_text() == "d0"
    assert rows[str(ids[1])].select_one(".doc-title") is None
    twin = api.get(f"/api/v1/pages/books/{book['id']}/judging").json()
    assert {r["doc_id"]: r["doc_title"] for r in twin["review"]} == {"d0": "Star Wars", "d1": None}


def test_a_cancelled_run_shows_cancelled_and_its_unknown_cost(
    api: ApiUser, client: TestClient, llm: FakeLLM
) -> None:
    llm.gate = threading.Event()  # the model hangs: the run is under way when cancelled
    judge = make_judge(api, llm, max_concurrency=1, timeout_s=120)
    book = make_book(api)
    add_pairs(api, book["id"], [{"grade": 1}, {"grade": 2}])
    csrf = login(client)
    try:
        started = client.post(
            f"/books/{book['id']}/judging",
            data={"csrf_token": csrf, "judge_id": str(judge["id"]), "action": "start"},
            follow_redirects=False,
        )
        run_url = started.headers["location"]
        deadline = time.monotonic() + 10
        while not llm.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        running = soup(client.get(run_url))
        assert one(running, "#judge-run-status").get_text() == "running"
        assert one(running, "#judge-run-cost").get_text() == "cost unknown (no prices set)"
        cancelled = client.post(f"{run_url}/cancel", data={"csrf_token": csrf})
        assert cancelled.status_code == 200
        page = soup(cancelled)
        assert one(page, "#judge-run-status").get_text() == "cancelled"
        assert attr(one(page, "#judge-run-view"), "data-status") == "cancelled"
        assert page.select_one("#judge-run-view[hx-get]") is None  # no more polling
        assert page.select_one("#judge-run-cancel") is None
        listed = soup(client.get(f"/books/{book['id']}/judging"))
        row = one(listed, "#judge-runs tbody tr")
        assert one(row, ".status").get_text() == "cancelled"
        assert one(row, ".cost").get_text() == "no prices set"
    finally:
        llm.gate.set()


def test_a_judge_is_deleted_after_confirming(
    api: ApiUser, client: TestClient, db: Session, llm: FakeLLM
) -> None:
    judge = make_judge(api, llm)
    book = make_book(api)
    (pair_id,) = add_pairs(api, book["id"], [{"grade": 1}])
    db.add(
        JudgeJudgement(
            book_id=book["id"],
            pair_id=pair_id,
            judge_id=judge["id"],
            rating=1.0,
            model="m",
            prompt_sha256="0" * 64,
        )
    )
    db.commit()
    csrf = login(client)
    page = soup(client.get(f"/judges/{judge['id']}"))
    button = one(page, "#delete-judge button")
    assert attr(button, "hx-post").endswith(f"/judges/{judge['id']}/delete")
    assert "Delete judge “Fake GPT”?" in attr(button, "hx-confirm")
    confirm = soup(client.get(attr(one(page, "#delete-judge"), "action")))
    assert one(confirm, ".doomed-name").get_text() == "Fake GPT"
    assert "Its ratings of every book and its 0 runs" in one(confirm, ".consequence").get_text()
    form = one(confirm, "#confirm-delete-form")
    assert client.post(attr(form, "action"), data={}).status_code == 403  # no CSRF token
    gone = client.post(attr(form, "action"), data={"csrf_token": csrf}, follow_redirects=False)
    assert gone.status_code == 303 and gone.headers["location"].endswith("/judges")
    db.expire_all()
    assert db.get(Judge, judge["id"]) is None
    assert db.query(JudgeJudgement).count() == 0
    assert api.get(f"/api/v1/books/{book['id']}").status_code == 200  # the book stays
    assert client.get(f"/judges/{judge['id']}").status_code == 404


def test_a_judge_with_a_run_under_way_is_not_deleted(
    api: ApiUser, client: TestClient, db: Session, llm: FakeLLM
) -> None:
    judge = make_judge(api, llm)
    book = make_book(api)
    db.add(
        JudgeRun(
            book_id=book["id"],
            judge_id=judge["id"],
            user_id=api.id,
            status="queued",
            pairs_mode="all",
            pair_ids=[],
            pairs_total=0,
        )
    )
    db.commit()
    csrf = login(client)
    refused = client.post(f"/judges/{judge['id']}/delete", data={"csrf_token": csrf})
    assert refused.status_code == 409
    assert "cancel it first" in refused.text
    assert db.get(Judge, judge["id"]) is not None


def test_the_new_judge_form_has_every_setting(
    api: ApiUser, client: TestClient, llm: FakeLLM
) -> None:
    csrf = login(client)
    page = soup(client.get("/judges"))
    form = one(page, "#new-judge-form")
    defaults = {
        name: attr(one(form, f"[name={name}]"), "value")
        for name in (
            "temperature",
            "max_output_tokens",
            "requests_per_minute",
            "tokens_per_minute",
            "max_concurrency",
            "timeout_s",
        )
    }
    assert defaults == {
        "temperature": "0.0",
        "max_output_tokens": "512",
        "requests_per_minute": "60",
        "tokens_per_minute": "0",
        "max_concurrency": "4",
        "timeout_s": "30.0",
    }
    assert one(form, "textarea[name=prompt]").get_text() == ""
    assert "{{query}}" in one(form, "#default-prompt pre").get_text()
    values = {
        "csrf_token": csrf,
        "name": "Careful",
        "provider": "openai",
        "base_url": f"{llm.url}/v1",
        "model": "m",
        "temperature": "0.7",
        "max_output_tokens": "300",
        "requests_per_minute": "500",
        "tokens_per_minute": "90000",
        "max_concurrency": "8",
        "timeout_s": "12",
        "prompt": "Rate {{doc}} for {{query}} on {{scale}}.",
        "headers": "X-Team: search",
    }
    bad = client.post("/judges", data={**values, "max_concurrency": "65", "prompt": "{{nope}}"})
    assert bad.status_code == 422
    kept = soup(bad)
    assert one(kept, "#error-max_concurrency") and "{{nope}}" in one(kept, "#error-prompt").text
    assert attr(one(kept, "[name=temperature]"), "value") == "0.7"  # what was typed stays
    assert one(kept, "textarea[name=prompt]").get_text() == "{{nope}}"
    created = client.post("/judges", data=values, follow_redirects=False)
    assert created.status_code == 303, created.text
    (saved,) = api.get("/api/v1/judges").json()
    assert {k: saved[k] for k in defaults} == {
        "temperature": 0.7,
        "max_output_tokens": 300,
        "requests_per_minute": 500,
        "tokens_per_minute": 90000,
        "max_concurrency": 8,
        "timeout_s": 12.0,
    }
    assert saved["prompt"] == values["prompt"] and not saved["uses_default_prompt"]
    assert saved["header_names"] == ["X-Team"]


def test_a_trial_answers_with_a_redirect_and_a_reload_asks_nothing_again(
    api: ApiUser, other_api: ApiUser, client: TestClient, llm: FakeLLM
) -> None:
    judge = make_judge(api, llm)
    book = make_book(api)
    add_pairs(api, book["id"], [{"title": f"Film {i}", "grade": i % 4} for i in range(3)])
    csrf = login(client)
    tested = client.post(
        f"/judges/{judge['id']}/test",
        data={"csrf_token": csrf, "book_id": str(book["id"]), "n": "3"},
        follow_redirects=False,
    )
    assert tested.status_code == 303
    location = tested.headers["location"]
    assert f"/judges/{judge['id']}?trial=" in location and location.endswith("#judge-test")
    assert len(llm.requests) == 3
    # The page the browser lands on (and reloads) shows the result; the judge is not asked
    # again.
    shown = [client.get(location) for _ in range(2)]
    for page in shown:
        assert page.status_code == 200
        rows = soup(page).select("#test-results tbody tr")
        assert [one(r, ".doc-title").get_text() for r in rows] == [f"Film {i}" for i in range(3)]
    assert len(llm.requests) == 3
    # Without the trial the page has no result; an unknown trial says it is gone.
    assert soup(client.get(f"/judges/{judge['id']}")).select_one("#test-results") is None
    gone = client.get(f"/judges/{judge['id']}?trial=999999")
    assert gone.status_code == 404
    assert "no longer kept" in soup(gone).get_text()
    assert soup(gone).select_one("#test-results") is None
    # Another user never sees it (the judge is not theirs, nor the trial).
    client.cookies.clear()
    login(client, other_api.email)
    assert client.get(location).status_code == 404
