"""Book export (CSV, Quepid JSON) and import of Quepid's book format."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser, make_api_user
from tests.support.books import (
    add_pairs,
    book_with_raters,
    judge,
)

QUEPID_BOOK: dict[str, Any] = {
    "name": "Imported from Quepid",
    "show_rank": False,
    "support_implicit_judgements": False,
    "scorer": {
        "name": "AP@10",
        "scale": [0, 1, 2, 3],
        "scale_with_labels": {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"},
    },
    "query_doc_pairs": [
        {
            "query_text": "star wars",
            "doc_id": "11",
            "position": 0,
            "document_fields": '{"title": "Star Wars", "year": 1977}',
            "judgements": [
                {
                    "rating": 3,
                    "unrateable": False,
                    "judge_later": False,
                    "user_email": "alice@example.com",
                    "explanation": None,
                },
                {
                    "rating": None,
                    "unrateable": True,
                    "judge_later": False,
                    "user_email": "bob@example.com",
                    "explanation": None,
                },
            ],
        },
        {
            "query_text": "star wars",
            "doc_id": "12",
            "position": 1,
            "document_fields": '{"title": "Star Trek"}',
            "judgements": [
                {
                    "rating": None,
                    "unrateable": False,
                    "judge_later": True,
                    "user_email": "bob@example.com",
                    "explanation": None,
                }
            ],
        },
    ],
}


def test_import_then_export_round_trips(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    bob = make_api_user(client, session_factory, "bob@example.com")
    response = api.post("/api/v1/books/import", json=QUEPID_BOOK)
    assert response.status_code == 201, response.text
    book = response.json()
    assert book["scale"] == [0, 1, 2, 3] and book["pair_count"] == 2
    assert book["scale_labels"]["3"] == "Perfect"
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    assert pairs[0]["fields"] == {"title": "Star Wars", "year": 1977}
    assert pairs[0]["judgements"] == [
        {"user_id": api.id, "rating": 3.0, "unrateable": False},
        {"user_id": bob.id, "rating": None, "unrateable": True},
    ]
    assert pairs[1]["judgements"] == []  # "judge later" is not a judgement
    # Alice judged 11; the next pair for her is 12, the one nobody judged.
    assert api.get(f"/api/v1/books/{book['id']}/next").json()["doc_id"] == "12"
    exported = api.get(f"/api/v1/books/{book['id']}/export?format=quepid").json()
    assert exported["name"] == QUEPID_BOOK["name"]
    assert exported["scorer"]["scale"] == [0, 1, 2, 3]
    first = exported["query_doc_pairs"][0]
    assert json.loads(first["document_fields"]) == {"title": "Star Wars", "year": 1977}
    assert [(j["rating"], j["unrateable"], j["user_email"]) for j in first["judgements"]] == [
        (3, False, "alice@example.com"),
        (None, True, "bob@example.com"),
    ]
    again = api.post("/api/v1/books/import", json=exported)
    assert again.status_code == 201
    assert (
        api.get(f"/api/v1/books/{again.json()['id']}/pairs").json()[0]["judgements"]
        == pairs[0]["judgements"]
    )


def test_csv_export(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    ids = add_pairs(api, book["id"], [('say "hi", now', "d1"), ("plain", "d2")])
    judge(api, book["id"], ids[('say "hi", now', "d1")], 2)
    judge(bob, book["id"], ids[('say "hi", now', "d1")], None)
    judge(bob, book["id"], ids[("plain", "d2")], 0)
    response = api.get(f"/api/v1/books/{book['id']}/export?format=csv")
    assert response.headers["content-type"].startswith("text/csv")
    assert response.text.splitlines()[1] == '"say ""hi"", now",d1,2,alice@example.com'
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows == [
        ["query", "docid", "rating", "rater"],
        ['say "hi", now', "d1", "2", "alice@example.com"],
        ['say "hi", now', "d1", "", "bob@example.com"],
        ["plain", "d2", "0", "bob@example.com"],
    ]
    assert api.get(f"/api/v1/books/{book['id']}/export?format=xml").status_code == 422


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"scorer": {"scale": [3, 1]}}, "scale"),
        ({"scorer": {"name": "Nobody's scorer"}, "query_doc_pairs": []}, "no scale"),
        ({"scorer": {"scale": ["a", "b"]}}, "list of numbers"),
        ({"query_doc_pairs": "nope"}, "list"),
        ({"query_doc_pairs": [{"query_text": "", "doc_id": "1"}]}, "Pair 0"),
        (
            {
                "query_doc_pairs": [
                    {
                        "query_text": "q",
                        "doc_id": "1",
                        "judgements": [{"rating": 9, "user_email": "alice@example.com"}],
                    }
                ]
            },
            "scale",
        ),
        (
            {
                "query_doc_pairs": [
                    {
                        "query_text": "q",
                        "doc_id": "1",
                        "judgements": [{"rating": 1, "user_email": "nobody@example.com"}],
                    }
                ]
            },
            "nobody@example.com",
        ),
    ],
)
def test_bad_imports_are_422_and_create_nothing(
    api: ApiUser, change: dict[str, object], needle: str
) -> None:
    response = api.post("/api/v1/books/import", json={**QUEPID_BOOK, **change})
    assert response.status_code == 422, response.text
    assert needle in json.dumps(response.json()["detail"])
    assert api.get("/api/v1/books").json() == []


def test_import_refuses_non_objects(api: ApiUser) -> None:
    assert api.post("/api/v1/books/import", json=[1, 2]).status_code == 422
    assert api.get("/api/v1/books").json() == []


def _quepid_export_pair(text: str, doc: str, need: str | None, ratings: list[float]) -> Any:
    """A pair as Quepid's book export writes it (fields as JSON text, notes, options)."""
    return {
        "query_text": text,
        "doc_id": doc,
        "position": 1,
        "document_fields": json.dumps({"title": f"Doc {doc}"}),
        "information_need": need,
        "notes": None,
        "options": None,
        "judgements": [
            {"rating": r, "unrateable": False, "judge_later": False, "user_email": e}
            for r, e in zip(ratings, ["alice@example.com", "bob@example.com"], strict=False)
        ],
    }


def test_quepid_book_export_without_a_scale_takes_its_named_scorers(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_api_user(client, session_factory, "bob@example.com")
    # What Quepid's own book export writes: the scorer by name only, no scale anywhere.
    export = {
        "name": "Rating party",
        "show_rank": False,
        "support_implicit_judgements": None,
        "scorer": {"name": "nDCG@10"},
        "selection_strategy": {"name": "Multiple Raters", "description": "Up to three."},
        "query_doc_pairs": [
            _quepid_export_pair("projector screen", "325961", "A screen, indoor.", [3.0, 2.0]),
            _quepid_export_pair("projector screen", "47471", "A screen, indoor.", [0.0]),
        ],
    }
    response = api.post("/api/v1/books/import", json=export)
    assert response.status_code == 201, response.text
    book = response.json()
    assert book["scale"] == [0, 1, 2, 3]  # Quepid's nDCG@10 rates on 0-3
    assert book["scale_labels"] == {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"}
    pairs = api.get(f"/api/v1/books/{book['id']}/pairs").json()
    assert [p["information_need"] for p in pairs] == ["A screen, indoor.", "A screen, indoor."]
    assert [j["rating"] for j in pairs[0]["judgements"]] == [3.0, 2.0]


def test_a_scale_is_taken_from_the_judgements_when_the_scorer_is_unknown(api: ApiUser) -> None:
    export = {
        "name": "Custom scorer party",
        "scorer": {"name": "Our own 0-4 scorer"},
        "query_doc_pairs": [
            _quepid_export_pair("q", "1", None, [4.0]),
            _quepid_export_pair("q", "2", None, [1.0]),
        ],
    }
    response = api.post("/api/v1/books/import", json=export)
    assert response.status_code == 201, response.text
    assert response.json()["scale"] == [1, 2, 3, 4]


def test_refusals_name_the_field_and_show_no_validation_internals(api: ApiUser) -> None:
    export = {
        **QUEPID_BOOK,
        "query_doc_pairs": [{"query_text": "", "doc_id": "1", "judgements": []}],
    }
    response = api.post("/api/v1/books/import", json=export)
    assert response.status_code == 422
    message = response.json()["detail"][0]["msg"]
    assert message == (
        "Pair 0 is not valid: query_doc_pairs[0].query_text: "
        "String should have at least 1 character."
    )
    bad_scale = {**QUEPID_BOOK, "scorer": {"scale": [3, 1]}}
    message = api.post("/api/v1/books/import", json=bad_scale).json()["detail"][0]["msg"]
    assert message == "The book is not valid: scale: the scale must be strictly ascending."
    for text in (message,):
        assert "pydantic" not in text and "type=" not in text and "input_value" not in text


def test_relevo_book_export_round_trips_information_needs(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    make_api_user(client, session_factory, "bob@example.com")
    export = {
        **QUEPID_BOOK,
        "query_doc_pairs": [
            {**pair, "information_need": f"Need {n}"}
            for n, pair in enumerate(QUEPID_BOOK["query_doc_pairs"])
        ],
    }
    first = api.post("/api/v1/books/import", json=export).json()
    exported = api.get(f"/api/v1/books/{first['id']}/export?format=quepid").json()
    assert [p["information_need"] for p in exported["query_doc_pairs"]] == ["Need 0", "Need 1"]
    again = api.post("/api/v1/books/import", json=exported).json()
    keep = ("query_text", "doc_id", "position", "fields", "information_need")
    before = api.get(f"/api/v1/books/{first['id']}/pairs").json()
    after = api.get(f"/api/v1/books/{again['id']}/pairs").json()
    assert [{k: p[k] for k in keep} for p in after] == [{k: p[k] for k in keep} for p in before]
    assert [p["judgements"] for p in after] == [p["judgements"] for p in before]
    assert (again["scale"], again["scale_labels"]) == (first["scale"], first["scale_labels"])
