"""Books over the API: pairs, populate, three raters judging with `next`, bad input."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.books import (
    add_pairs,
    book_with_raters,
    case_with_run,
    judge,
    make_book,
)

QUERIES = {"star wars": ["sw1", "sw2", "sw3"], "batman": ["b1", "b2"]}


def test_create_read_update_delete(api: ApiUser, other_api: ApiUser) -> None:
    book = make_book(api, scale_labels={"0": "Bad", "3": "Perfect"})
    assert book["scale"] == [0, 1, 2, 3] and book["pair_count"] == 0
    assert [b["id"] for b in api.get("/api/v1/books").json()] == [book["id"]]
    assert other_api.get(f"/api/v1/books/{book['id']}").status_code == 404
    assert other_api.get("/api/v1/books").json() == []
    changed = api.patch(f"/api/v1/books/{book['id']}", json={"name": "Renamed"}).json()
    assert changed["name"] == "Renamed" and changed["scale_labels"] == {"0": "Bad", "3": "Perfect"}
    assert api.delete(f"/api/v1/books/{book['id']}").status_code == 204
    assert api.get(f"/api/v1/books/{book['id']}").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "scale": [3, 2, 1]},
        {"name": "x", "scale": [1]},
        {"name": "", "scale": [0, 1]},
        {"name": "x", "scale": [0, 1], "surprise": 1},
    ],
)
def test_bad_books_are_422(api: ApiUser, body: dict[str, object]) -> None:
    response = api.post("/api/v1/books", json=body)
    assert response.status_code == 422
    assert "detail" in response.json()


def test_pairs_upsert_and_populate(api: ApiUser, session_factory: sessionmaker[Session]) -> None:
    book = make_book(api)
    case_id, _ids, _run = case_with_run(api, session_factory, QUERIES)
    response = api.post(
        f"/api/v1/books/{book['id']}/populate", json={"case_id": case_id, "depth": 2}
    )
    assert response.json() == {"created": 4, "existing": 0}
    again = api.post(f"/api/v1/books/{book['id']}/populate", json={"case_id": case_id, "depth": 3})
    assert again.json() == {"created": 1, "existing": 4}
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    assert [(p["query_text"], p["doc_id"]) for p in pairs] == [
        ("star wars", "sw1"),
        ("star wars", "sw2"),
        ("batman", "b1"),
        ("batman", "b2"),
        ("star wars", "sw3"),
    ]
    assert pairs[0]["fields"] == {"title": "Title sw1", "year": 2000}
    added = api.post(
        f"/api/v1/books/{book['id']}/pairs",
        json={
            "pairs": [
                {"query_text": "batman", "doc_id": "b1"},
                {"query_text": "new", "doc_id": "n1"},
            ]
        },
    )
    assert added.json() == {"created": 1, "existing": 1}


def test_populate_without_a_finished_run_is_409(api: ApiUser) -> None:
    from tests.support.pages import movies_case

    book = make_book(api)
    case_id = movies_case(api)
    response = api.post(f"/api/v1/books/{book['id']}/populate", json={"case_id": case_id})
    assert response.status_code == 409
    assert "no finished run" in response.json()["detail"]


def test_populate_from_someone_elses_case_is_404(api: ApiUser, other_api: ApiUser) -> None:
    from tests.support.pages import movies_case

    book = make_book(api)
    theirs = movies_case(other_api)
    response = api.post(f"/api/v1/books/{book['id']}/populate", json={"case_id": theirs})
    assert response.status_code == 404


def test_three_raters_judge_a_populated_book(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob, carol) = book_with_raters(
        api, client, session_factory, monkeypatch, names=("bob", "carol")
    )
    case_id, _ids, _run = case_with_run(api, session_factory, QUERIES)
    api.post(f"/api/v1/books/{book['id']}/populate", json={"case_id": case_id})
    base = f"/api/v1/books/{book['id']}"
    plan: dict[int, list[float | None]] = {
        api.id: [3, 2, 1, 0, 3],
        bob.id: [3, 1, None, 0, 2],
        carol.id: [2, 2, 1, 0, 3],
    }
    raters = [api, bob, carol]
    seen: dict[int, list[int]] = {r.id: [] for r in raters}
    for step in range(5):
        for rater in raters:
            pair = rater.get(f"{base}/next").json()
            assert "judgements" not in pair  # raters do not see each other's judgements
            # Fewest judgements first: nobody is handed a pair two others judged
            # while a less-judged one is waiting.
            assert pair["id"] not in seen[rater.id]
            seen[rater.id].append(pair["id"])
            assert judge(rater, book["id"], pair["id"], plan[rater.id][step]).status_code == 200
    for rater in raters:
        assert rater.get(f"{base}/next").status_code == 204
    assert seen[api.id][0] != seen[bob.id][0] != seen[carol.id][0]
    pairs = api.get(f"{base}/pairs").json()
    assert all(len(p["judgements"]) == 3 for p in pairs)
    unrateable = [j for p in pairs for j in p["judgements"] if j["unrateable"]]
    assert unrateable == [{"user_id": bob.id, "rating": None, "unrateable": True}]
    # A new PUT replaces the rater's judgement.
    first = seen[api.id][0]
    assert judge(api, book["id"], first, 1).json()["rating"] == 1
    mine = [j for p in api.get(f"{base}/pairs").json() if p["id"] == first for j in p["judgements"]]
    assert [j["rating"] for j in mine if j["user_id"] == api.id] == [1]
    assert len(mine) == 3


def test_next_prefers_the_least_judged_pair(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    ids = add_pairs(api, book["id"], [("q", "a"), ("q", "b"), ("q", "c")])
    judge(api, book["id"], ids[("q", "a")], 1)
    judge(api, book["id"], ids[("q", "b")], 1)
    # Bob has judged nothing: c (no judgement yet) comes before a and b.
    assert bob.get(f"/api/v1/books/{book['id']}/next").json()["id"] == ids[("q", "c")]
    judge(bob, book["id"], ids[("q", "c")], 2)
    assert bob.get(f"/api/v1/books/{book['id']}/next").json()["id"] == ids[("q", "a")]


@pytest.mark.parametrize(
    "body",
    [
        {"rating": 4},
        {"rating": 1.5},
        {"rating": -1},
        {"rating": None},
        {"rating": 2, "unrateable": True},
        {"rating": "two"},
        {},
    ],
)
def test_bad_judgements_are_422_and_change_nothing(api: ApiUser, body: dict[str, object]) -> None:
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("q", "a")])
    pair_id = ids[("q", "a")]
    judge(api, book["id"], pair_id, 2)
    response = api.put(f"/api/v1/books/{book['id']}/pairs/{pair_id}/judgement", json=body)
    assert response.status_code == 422
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    assert pairs[0]["judgements"] == [{"user_id": api.id, "rating": 2.0, "unrateable": False}]


def test_judging_a_book_you_cannot_see_is_404(api: ApiUser, other_api: ApiUser) -> None:
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("q", "a")])
    assert judge(other_api, book["id"], ids[("q", "a")], 1).status_code == 404
    assert other_api.get(f"/api/v1/books/{book['id']}/next").status_code == 404
    assert judge(api, book["id"], 2**40, 1).status_code == 404
    assert api.get(f"/api/v1/books/{book['id']}/pairs").json()[0]["judgements"] == []


def test_scale_change_that_orphans_judgements_is_409(api: ApiUser) -> None:
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("q", "a")])
    judge(api, book["id"], ids[("q", "a")], 3)
    response = api.patch(f"/api/v1/books/{book['id']}", json={"scale": [0, 1]})
    assert response.status_code == 409
    assert api.get(f"/api/v1/books/{book['id']}").json()["scale"] == [0, 1, 2, 3]
    assert (
        api.patch(f"/api/v1/books/{book['id']}", json={"scale": [0, 1, 2, 3, 4]}).status_code == 200
    )


def test_raters_beyond_the_bits_are_looked_up(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.books import service as book_service

    monkeypatch.setattr(book_service, "SLOTS", 1)  # only the first rater gets a bit
    book, (bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    ids = add_pairs(api, book["id"], [("q", "a"), ("q", "b"), ("q", "c")])
    judge(api, book["id"], ids[("q", "b")], 1)
    judge(bob, book["id"], ids[("q", "a")], 1)
    judge(bob, book["id"], ids[("q", "c")], 1)
    assert bob.get(f"/api/v1/books/{book['id']}/next").json()["id"] == ids[("q", "b")]
    assert api.get(f"/api/v1/books/{book['id']}/next").json()["id"] == ids[("q", "a")]
    judge(bob, book["id"], ids[("q", "b")], 2)
    assert bob.get(f"/api/v1/books/{book['id']}/next").status_code == 204
