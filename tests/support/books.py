"""Builders for book tests: a case with a finished run, a book, and raters who can see it."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Select, select, union
from sqlalchemy.orm import Session, sessionmaker

from app import access
from app.models import User
from tests.fixtures.users import ApiUser, make_api_user
from tests.support.api import scorer_id
from tests.support.pages import doc, finished_run, movies_case


def share_books_with_raters(monkeypatch: pytest.MonkeyPatch, owner: ApiUser) -> None:
    """Let every user see the owner's things, standing in for a team the raters belong to."""
    share_everything_of(monkeypatch, owner.id)


def share_everything_of(monkeypatch: pytest.MonkeyPatch, owner_id: int) -> None:
    """Make access treat everything the owner has as shared with every user."""
    original_ids = access.shared_ids
    original_check = access.is_shared_with

    def ids(model: type[access.Shareable], *, user_id: int) -> Select[tuple[int]]:
        owned = select(model.id).where(model.owner_id == owner_id)
        return select(union(original_ids(model, user_id=user_id), owned).subquery().c[0])

    def check(*, session: Session, obj: access.Shareable, user: User) -> bool:
        return obj.owner_id == owner_id or original_check(session=session, obj=obj, user=user)

    monkeypatch.setattr(access, "shared_ids", ids)
    monkeypatch.setattr(access, "is_shared_with", check)


def case_with_run(
    api: ApiUser, factory: sessionmaker[Session], queries: dict[str, list[str]]
) -> tuple[int, dict[str, int], int]:
    """Return (case id, query ids by text, run id) of a case on DCG@10 with a finished run."""
    scorer = scorer_id(api, "DCG@10")
    case_id = movies_case(api, scorer_id=scorer)
    response = api.post(f"/api/v1/cases/{case_id}/queries/bulk", json={"queries": list(queries)})
    ids = {q["text"]: q["id"] for q in response.json()["queries"]}
    outcomes: dict[int, dict[str, Any]] = {
        ids[text]: {
            "text": text,
            "docs": [
                doc(d, f"Title {d}", rank + 1, year=2000 + rank) for rank, d in enumerate(docs)
            ],
        }
        for text, docs in queries.items()
    }
    run_id = finished_run(factory, case_id, outcomes, scorer=scorer)
    return case_id, ids, run_id


def make_book(api: ApiUser, **extra: Any) -> dict[str, Any]:
    """Create a 0-3 book and return it."""
    body = {"name": "Movies judgements", "scale": [0, 1, 2, 3], **extra}
    response = api.post("/api/v1/books", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def judge(rater: ApiUser, book_id: int, pair_id: int, rating: float | None) -> Any:
    """PUT a judgement (None = "can't tell") and return the response."""
    body = {"rating": rating} if rating is not None else {"rating": None, "unrateable": True}
    return rater.put(f"/api/v1/books/{book_id}/pairs/{pair_id}/judgement", json=body)


def add_pairs(
    api: ApiUser, book_id: int, pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """Add pairs and return their ids by (query text, doc id)."""
    body = {"pairs": [{"query_text": q, "doc_id": d} for q, d in pairs]}
    assert api.post(f"/api/v1/books/{book_id}/pairs", json=body).status_code == 200
    listed = api.get(f"/api/v1/books/{book_id}/pairs").json()
    return {(p["query_text"], p["doc_id"]): p["id"] for p in listed}


def book_with_raters(
    api: ApiUser,
    client: TestClient,
    factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
    names: tuple[str, ...] = ("bob",),
) -> tuple[dict[str, Any], list[ApiUser]]:
    """A new book of ``api``'s that raters see, and those raters (``name@example.com``)."""
    share_books_with_raters(monkeypatch, api)
    raters = [make_api_user(client, factory, f"{name}@example.com") for name in names]
    return make_book(api), raters
