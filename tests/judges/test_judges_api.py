"""Judges over the API: create, read, change, share, delete; secrets sealed; test on pairs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.secret_box import Place, is_sealed, unseal
from tests.fixtures.users import ApiUser
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.books import add_pairs, make_book


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def judge_body(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "GPT judge",
        "provider": "openai",
        "base_url": f"{url}/v1",
        "model": "gpt-fake",
        "api_key": "sk-secret-abc",
        "headers": {"X-Org": "org-secret-value"},
        "requests_per_minute": 100_000,
        **extra,
    }


def create(api: ApiUser, url: str = "http://127.0.0.1:9", **extra: Any) -> dict[str, Any]:
    response = api.post("/api/v1/judges", json=judge_body(url, **extra))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_create_hides_secrets_and_seals_them_at_rest(api: ApiUser, db: Session) -> None:
    judge = create(api)
    assert judge["has_api_key"] is True
    assert judge["header_names"] == ["X-Org"]
    assert "sk-secret-abc" not in str(judge) and "org-secret-value" not in str(judge)
    assert judge["uses_default_prompt"] is True and "{{doc}}" in judge["prompt"]
    assert len(judge["prompt_sha256"]) == 64
    assert (judge["requests_per_minute"], judge["max_concurrency"]) == (100_000, 4)
    row = db.execute(
        text("SELECT api_key_sealed, headers FROM judges WHERE id = :id"), {"id": judge["id"]}
    ).one()
    assert is_sealed(row[0]) and "sk-secret-abc" not in row[0]
    assert unseal(row[0], place=Place("judges", "api_key_sealed", judge["id"])) == "sk-secret-abc"
    headers = row[1] if isinstance(row[1], dict) else __import__("json").loads(row[1])
    assert "org-secret-value" not in str(headers)
    place = Place("judges", "headers", judge["id"], "X-Org")
    assert unseal(headers["X-Org"], place=place) == "org-secret-value"
    listed = api.get("/api/v1/judges").json()
    assert [j["id"] for j in listed] == [judge["id"]]


def test_unknown_placeholder_is_422(api: ApiUser) -> None:
    response = api.post(
        "/api/v1/judges", json=judge_body("http://127.0.0.1:9", prompt="Rate {{query}} {{title}}")
    )
    assert response.status_code == 422
    assert "{{title}}" in response.text


@pytest.mark.parametrize(
    "bad",
    [
        {"provider": "gemini"},
        {"base_url": "ftp://example.com"},
        {"temperature": -1},
        {"headers": {"Bad Name": "x"}},
        {"max_concurrency": 0},
    ],
)
def test_bad_bodies_are_422(api: ApiUser, bad: dict[str, Any]) -> None:
    response = api.post("/api/v1/judges", json=judge_body("http://127.0.0.1:9", **bad))
    assert response.status_code == 422


def test_new_host_drops_key_and_headers_unless_sent_again(api: ApiUser) -> None:
    judge = create(api)
    url = f"/api/v1/judges/{judge['id']}"
    same_host = api.patch(url, json={"base_url": "http://127.0.0.1:9/other"}).json()
    assert same_host["has_api_key"] is True and same_host["header_names"] == ["X-Org"]
    moved = api.patch(url, json={"base_url": "http://localhost:11434/v1"}).json()
    assert moved["has_api_key"] is False and moved["header_names"] == []
    again = api.patch(
        url, json={"base_url": "https://api.openai.com/v1", "api_key": "sk-new"}
    ).json()
    assert again["has_api_key"] is True and again["header_names"] == []
    removed = api.patch(url, json={"api_key": ""}).json()
    assert removed["has_api_key"] is False


def test_prompt_can_be_set_and_reset(api: ApiUser) -> None:
    judge = create(api, prompt="Rate {{doc}} for {{query}} on {{scale}}")
    assert judge["uses_default_prompt"] is False
    url = f"/api/v1/judges/{judge['id']}"
    reset = api.patch(url, json={"prompt": ""}).json()
    assert reset["uses_default_prompt"] is True
    assert reset["prompt_sha256"] != judge["prompt_sha256"]


def test_other_users_get_404_and_owner_deletes(api: ApiUser, other_api: ApiUser) -> None:
    judge = create(api)
    url = f"/api/v1/judges/{judge['id']}"
    assert other_api.get(url).status_code == 404
    assert other_api.patch(url, json={"name": "mine"}).status_code == 404
    assert other_api.delete(url).status_code == 404
    assert other_api.get("/api/v1/judges").json() == []
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_team_members_use_a_shared_judge_but_only_the_owner_deletes(
    api: ApiUser, other_api: ApiUser
) -> None:
    team = api.post("/api/v1/teams", json={"name": "Raters"}).json()
    assert (
        api.put(
            f"/api/v1/teams/{team['id']}/members",
            json={"email": other_api.email, "role": "member"},
        ).status_code
        == 200
    )
    judge = create(api, team_ids=[team["id"]])
    assert judge["team_ids"] == [team["id"]]
    url = f"/api/v1/judges/{judge['id']}"
    seen = other_api.get(url).json()
    assert seen["id"] == judge["id"] and seen["has_api_key"] is True
    assert other_api.patch(url, json={"temperature": 0.5}).json()["temperature"] == 0.5
    assert other_api.delete(url).status_code == 403


def test_test_on_pairs_shows_prompt_reply_rating_and_cost(api: ApiUser, llm: FakeLLM) -> None:
    judge = create(api, llm.url, price_input_per_mtok=1.0, price_output_per_mtok=4.0)
    book = make_book(api, scale_labels={"0": "Bad", "3": "Perfect"})
    add_pairs(api, book["id"], [("star wars", "d1"), ("alien", "d2"), ("heat", "d3")])
    response = api.post(f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"], "n": 2})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert len(items) == 2
    for item in items:
        assert item["rating"] == 1.0 and item["error"] is None
        assert item["query_text"] in item["prompt"] and "- 3: Perfect" in item["prompt"]
        assert '"rating": 1' in item["reply"]
        assert item["tokens_out"] == 12 and item["tokens_in"] > 50
        expected = (item["tokens_in"] * 1.0 + 12 * 4.0) / 1_000_000
        assert item["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert llm.requests[0].headers["X-Org"] == "org-secret-value"
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    assert all(p["judgements"] == [] for p in pairs)  # wrote nothing


@pytest.mark.runner  # concurrent requests: each needs a connection of its own
def test_concurrent_tests_share_the_judges_limits(api: ApiUser, llm: FakeLLM) -> None:
    # 3 requests a minute, one at a time; four tests at once of one pair each. They share
    # the judge's limits (one client per process): one request goes, the others find no
    # turn within the judge's timeout_s and say so, instead of sending 4 at once.
    llm.delay_s = 0.2
    judge = create(api, llm.url, requests_per_minute=3, max_concurrency=1, timeout_s=1)
    book = make_book(api)
    add_pairs(api, book["id"], [("star wars", "d1")])
    gate = threading.Barrier(4)

    def one_test(_: int) -> Any:
        gate.wait()
        return api.post(f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"]})

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(one_test, range(4)))
    assert [a.status_code for a in answers] == [200] * 4
    items = [a.json()["items"][0] for a in answers]
    assert len(llm.requests) <= 3 and llm.most_in_flight == 1
    assert sum(1 for i in items if i["rating"] == 1.0) == len(llm.requests)
    busy = [i["error"] for i in items if i["rating"] is None]
    assert len(busy) == 4 - len(llm.requests)
    assert all("no turn within the judge's limits" in e for e in busy)


def test_a_test_does_not_wait_out_a_long_retry_after(api: ApiUser, llm: FakeLLM) -> None:
    llm.retry_after = "120"
    judge = create(api, llm.url, timeout_s=5)
    book = make_book(api)
    add_pairs(api, book["id"], [("star wars", "d1")])
    response = api.post(f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"]})
    item = response.json()["items"][0]
    assert item["rating"] is None and "asking to wait 120 s" in item["error"]
    assert len(llm.requests) == 1


def test_test_needs_a_visible_book(api: ApiUser, other_api: ApiUser) -> None:
    judge = create(api)
    book = make_book(other_api)
    response = api.post(f"/api/v1/judges/{judge['id']}/test", json={"book_id": book["id"]})
    assert response.status_code == 404


def test_rotation_reseals_judge_secrets(api: ApiUser, db: Session) -> None:
    from cryptography.fernet import Fernet

    from app.secret_box import Keyring, current_keyring, registered_columns, reseal_column

    judge = create(api)
    old = current_keyring()
    new = Keyring((Fernet.generate_key().decode(), *old.keys))
    specs = [s for s in registered_columns() if s.table == "judges"]
    assert {s.column for s in specs} == {"api_key_sealed", "headers"}
    connection = db.connection()
    for spec in specs:
        reseal_column(connection, spec, keyring=new)
    row = db.execute(
        text("SELECT api_key_sealed FROM judges WHERE id = :id"), {"id": judge["id"]}
    ).one()
    newest_only = Keyring(new.keys[:1])
    place = Place("judges", "api_key_sealed", judge["id"])
    assert newest_only.unseal(row[0], place=place) == "sk-secret-abc"


@pytest.mark.parametrize(
    "bad", [{"api_key": "clé-secrète"}, {"headers": {"X-Org": "café"}}, {"api_key": "a\nb"}]
)
def test_secrets_that_cannot_travel_in_a_header_are_422(api: ApiUser, bad: dict[str, Any]) -> None:
    response = api.post("/api/v1/judges", json=judge_body("http://127.0.0.1:9", **bad))
    assert response.status_code == 422
