"""Book export (CSV, Quepid JSON) and import of Quepid's book format."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.books.book_helpers import add_pairs, judge, make_book, share_books_with_raters
from tests.fixtures.users import ApiUser, make_api_user

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
    share_books_with_raters(monkeypatch, api)
    bob = make_api_user(client, session_factory, "bob@example.com")
    book = make_book(api)
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
        ({"scorer": None, "scale": None}, "scale"),
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
