"""Agreement equals the libraries' on the same data; every aggregation method on ties and
unrateables; sync writes ratings and re-scores the latest run in place."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.metrics import cohen_kappa_score
from sqlalchemy.orm import Session, sessionmaker

from app.books.agreement import agreement_of
from app.books.consensus import aggregate
from tests.fixtures.users import ApiUser, make_api_user
from tests.support.books import (
    add_pairs,
    book_with_raters,
    case_with_run,
    judge,
    make_book,
    share_books_with_raters,
)

NAN = math.nan
# Rows are raters, columns pairs; NaN = not judged (or "can't tell").
DATA = [
    [3, 2, 1, 0, 3, NAN, 2, 1],
    [3, 1, NAN, 0, 2, 2, 2, 0],
    [2, 2, 1, 0, 3, 1, NAN, 1],
]


def triples(rows: list[list[float]]) -> list[tuple[int, int, float]]:
    return [
        (pair, rater + 10, value)
        for rater, row in enumerate(rows)
        for pair, value in enumerate(row)
        if not math.isnan(value)
    ]


def test_alpha_and_kappa_equal_the_libraries() -> None:
    result = agreement_of(triples(DATA), [0, 1, 2, 3])
    expected_alpha = krippendorff.alpha(
        reliability_data=np.array(DATA), level_of_measurement="ordinal"
    )
    assert result.krippendorff_alpha == pytest.approx(expected_alpha, abs=1e-12)
    assert (result.raters, result.pairs, result.pairs_multi) == (3, 8, 8)
    matrix = np.array(DATA)
    for kappa in result.cohen_kappa:
        a, b = matrix[kappa.a - 10], matrix[kappa.b - 10]
        both = ~np.isnan(a) & ~np.isnan(b)
        assert kappa.n == int(both.sum())
        assert kappa.kappa == pytest.approx(cohen_kappa_score(a[both], b[both]), abs=1e-12)
    assert [(k.a, k.b) for k in result.cohen_kappa] == [(10, 11), (10, 12), (11, 12)]


def test_undefined_values_are_null() -> None:
    one_rater = agreement_of([(1, 5, 2.0), (2, 5, 3.0)], [0, 1, 2, 3])
    assert one_rater.krippendorff_alpha is None and one_rater.cohen_kappa == []
    assert one_rater.pairs_multi == 0
    disjoint = agreement_of([(1, 5, 2.0), (2, 6, 3.0)], [0, 1, 2, 3])
    assert disjoint.cohen_kappa[0].n == 0 and disjoint.cohen_kappa[0].kappa is None
    assert disjoint.krippendorff_alpha is None
    same = agreement_of([(1, 5, 2.0), (1, 6, 2.0), (2, 5, 2.0), (2, 6, 2.0)], [0, 1, 2, 3])
    assert same.krippendorff_alpha is None  # no variation at all: alpha is 0/0
    assert same.cohen_kappa[0].kappa is None
    empty = agreement_of([], [0, 1])
    assert (empty.raters, empty.pairs, empty.krippendorff_alpha) == (0, 0, None)


@pytest.mark.parametrize(
    ("method", "ratings", "expected"),
    [
        ("mean", [1, 2, 2], 5 / 3),
        ("median", [0, 3], 1.5),
        ("median", [0, 1, 3, 3], 2.0),
        ("median", [1, 2, 3], 2.0),
        ("majority", [1, 3], 1.0),
        ("majority", [3, 3, 1, 1, 2], 1.0),
        ("majority", [0, 2, 2, 3], 2.0),
        ("rater", [2], 2.0),
        ("mean", [], None),
    ],
)
def test_aggregate(method: str, ratings: list[float], expected: float | None) -> None:
    result = aggregate(method, ratings)  # type: ignore[arg-type]
    assert result == (None if expected is None else pytest.approx(expected))


def test_agreement_route_leaves_cant_tell_out(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob, carol) = book_with_raters(
        api, client, session_factory, monkeypatch, names=("bob", "carol")
    )
    ids = add_pairs(api, book["id"], [("q", f"d{i}") for i in range(8)])
    raters = [api, bob, carol]
    for rater, row in zip(raters, DATA, strict=True):
        for i, value in enumerate(row):
            # NaN in DATA: Bob and Carol say "can't tell" there, Alice skips the pair.
            if math.isnan(value) and rater is api:
                continue
            judge(rater, book["id"], ids[("q", f"d{i}")], None if math.isnan(value) else value)
    got = api.get(f"/api/v1/books/{book['id']}/agreement").json()
    expected = krippendorff.alpha(reliability_data=np.array(DATA), level_of_measurement="ordinal")
    assert got["krippendorff_alpha"] == pytest.approx(expected, abs=1e-12)
    assert got["raters"] == 3 and got["pairs"] == 8 and got["pairs_multi"] == 8
    first = got["cohen_kappa"][0]
    assert (first["a"], first["b"], first["n"]) == (api.id, bob.id, 6)
    a, b = np.array(DATA[0]), np.array(DATA[1])
    both = ~np.isnan(a) & ~np.isnan(b)
    assert first["kappa"] == pytest.approx(cohen_kappa_score(a[both], b[both]), abs=1e-12)


def _judged_book(
    api: ApiUser, client: TestClient, factory: sessionmaker[Session]
) -> tuple[dict[str, object], ApiUser, ApiUser, int, dict[str, int], int]:
    """A book where three raters judged 'star wars' docs with ties and a can't-tell."""
    bob = make_api_user(client, factory, "bob@example.com")
    carol = make_api_user(client, factory, "carol@example.com")
    case_id, qids, run_id = case_with_run(
        api, factory, {"star wars": ["sw1", "sw2", "sw3"], "batman": ["b1"]}
    )
    book = make_book(api)
    ids = add_pairs(
        api,
        book["id"],
        [("star wars", "sw1"), ("star wars", "sw2"), ("star wars", "sw3"), ("Star Wars", "x")],
    )
    plan = {
        "sw1": (3, 1, None),  # a tie between 1 and 3 once "can't tell" is dropped
        "sw2": (0, 3, 3),
        "sw3": (2, None, None),
    }
    for doc, values in plan.items():
        for rater, value in zip((api, bob, carol), values, strict=True):
            judge(rater, int(book["id"]), ids[("star wars", doc)], value)
    judge(api, int(book["id"]), ids[("Star Wars", "x")], 3)
    return book, bob, carol, case_id, qids, run_id


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("mean", {"sw1": 2.0, "sw2": 2.0, "sw3": 2.0}),
        ("median", {"sw1": 2.0, "sw2": 3.0, "sw3": 2.0}),
        ("majority", {"sw1": 1.0, "sw2": 3.0, "sw3": 2.0}),
    ],
)
def test_sync_methods_write_ratings_and_rescore_in_place(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    expected: dict[str, float],
) -> None:
    share_books_with_raters(monkeypatch, api)
    book, _bob, _carol, case_id, qids, run_id = _judged_book(api, client, session_factory)
    runs_before = api.get(f"/api/v1/cases/{case_id}/runs").json()
    url = f"/api/v1/cases/{case_id}/books/{book['id']}/sync"
    result = api.post(url, json={"method": method}).json()
    # "Star Wars" (other case) matches no query: exact, case-sensitive text.
    assert result == {"ratings_set": 3, "ratings_unchanged": 0, "pairs_without_query": 1}
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['star wars']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == expected
    runs_after = api.get(f"/api/v1/cases/{case_id}/runs").json()
    assert [r["id"] for r in runs_after] == [r["id"] for r in runs_before] == [run_id]
    assert runs_after[0]["case_score"] is not None and runs_before[0]["case_score"] is None
    run = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
    star = next(q for q in run["queries"] if q["text"] == "star wars")
    assert star["status"] == "scored" and star["score"] is not None
    assert [d["rating"] for d in star["docs"]] == [
        expected["sw1"],
        expected["sw2"],
        expected["sw3"],
    ]
    again = api.post(url, json={"method": method}).json()
    assert again == {"ratings_set": 0, "ratings_unchanged": 3, "pairs_without_query": 1}


def test_sync_one_rater_and_bad_input(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    share_books_with_raters(monkeypatch, api)
    book, bob, _carol, case_id, qids, _run = _judged_book(api, client, session_factory)
    url = f"/api/v1/cases/{case_id}/books/{book['id']}/sync"
    assert api.post(url, json={"method": "rater"}).status_code == 422
    assert api.post(url, json={"method": "vote"}).status_code == 422
    result = api.post(url, json={"method": "rater", "user_id": bob.id}).json()
    # Bob's can't-tell on sw3 is no rating: only sw1 and sw2 are written.
    assert result == {"ratings_set": 2, "ratings_unchanged": 0, "pairs_without_query": 0}
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['star wars']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == {"sw1": 1.0, "sw2": 3.0}
    page = api.get(f"/api/v1/pages/cases/{case_id}").json()
    assert page["ratings_source"] == {
        "book_id": book["id"],
        "book_name": book["name"],
        "method": "rater",
        "rater_email": "bob@example.com",
        "rater_kind": "user",
        "rater_name": None,
    }
    # A user who does not exist, or never rated in this book, is not found, as an unknown
    # clicks rater or judge is (not a sync of nothing that answers 200).
    dave = make_api_user(client, session_factory, "dave@example.com")  # rated nothing here
    for unknown in (10**6, 10**12, dave.id):
        refused = api.post(url, json={"method": "rater", "user_id": unknown})
        assert refused.status_code == 404, refused.text
        assert refused.json()["detail"] == "No such rater in this book."
    assert api.get(f"/api/v1/pages/cases/{case_id}").json()["ratings_source"]["rater_kind"] == (
        "user"
    )


def test_sync_when_nothing_matches_changes_nothing(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, qids, _run = case_with_run(api, session_factory, {"batman": ["b1"]})
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("robin", "r1")])
    judge(api, book["id"], ids[("robin", "r1")], 2)
    url = f"/api/v1/cases/{case_id}/books/{book['id']}/sync"
    result = api.post(url, json={"method": "mean"})
    assert result.status_code == 200
    assert result.json() == {"ratings_set": 0, "ratings_unchanged": 0, "pairs_without_query": 1}
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['batman']}/ratings").json()
    assert ratings == {"ratings": []}
    assert api.get(f"/api/v1/pages/cases/{case_id}").json()["ratings_source"] is None


def test_sync_outside_the_scorers_scale_is_409(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    case_id, qids, _run = case_with_run(api, session_factory, {"batman": ["b1"]})
    book = make_book(api, scale=[0, 5, 10])
    ids = add_pairs(api, book["id"], [("batman", "b1")])
    judge(api, book["id"], ids[("batman", "b1")], 10)
    response = api.post(f"/api/v1/cases/{case_id}/books/{book['id']}/sync", json={"method": "mean"})
    assert response.status_code == 409
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['batman']}/ratings").json()
    assert ratings == {"ratings": []}


def test_sync_into_someone_elses_case_is_404(api: ApiUser, other_api: ApiUser) -> None:
    from tests.support.pages import movies_case

    book = make_book(api)
    theirs = movies_case(other_api)
    response = api.post(f"/api/v1/cases/{theirs}/books/{book['id']}/sync", json={"method": "mean"})
    assert response.status_code == 404
