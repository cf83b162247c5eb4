"""The book page names things: disputed pairs by title, each judge's kappa by person; and a
book is deleted from its page after a confirmation."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.models import Book, Judge, JudgeJudgement, Pair
from tests.fixtures.users import ApiUser
from tests.support.books import book_with_raters, judge, make_book
from tests.support.pages import attr, login, one, soup


def test_disputed_pairs_show_titles_and_kappas_name_each_person(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    db: Session,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    fields = [{"title": ["Alien", "Director's cut"]}, {"name": "Heat"}, {"overview": "no title"}]
    pairs = [{"query_text": "q", "doc_id": f"d{i}", "fields": f} for i, f in enumerate(fields)]
    assert api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs}).status_code == 200
    ids = [p["id"] for p in api.get(f"/api/v1/books/{book['id']}/pairs").json()]
    for pair_id, mine, theirs in zip(ids, (0, 3, 1), (3, 0, 2), strict=True):
        judge(api, book["id"], pair_id, mine)
        judge(bob, book["id"], pair_id, theirs)
    model = Judge(
        owner_id=api.id, name="Model", provider="openai", base_url="http://127.0.0.1:9", model="m"
    )
    db.add(model)
    db.flush()
    for pair_id, rating in zip(ids, (0.0, 3.0, 1.0), strict=True):
        db.add(
            JudgeJudgement(
                book_id=book["id"],
                pair_id=pair_id,
                judge_id=model.id,
                rating=rating,
                model="m",
                prompt_sha256="0" * 64,
            )
        )
    db.commit()
    login(client)
    page = soup(client.get(f"/books/{book['id']}"))
    rows = page.select("#disputed tbody tr")
    titles = {
        r["data-pair-id"]: (
            None if r.select_one(".doc-title") is None else one(r, ".doc-title").get_text(),
            one(r, ".doc-id").get_text(),
        )
        for r in rows
    }
    assert titles == {
        str(ids[0]): ("Alien, Director's cut", "d0"),
        str(ids[1]): ("Heat", "d1"),
        str(ids[2]): (None, "d2"),
    }
    # Each number of "kappa with each person" says whose it is.
    kappas = one(page, "#judge-agreement tbody tr").select(".judge-kappa")
    named = [(one(k, ".person").get_text(), one(k, ".kappa").get_text()) for k in kappas]
    assert named == [("alice@example.com", "1.000"), ("bob@example.com", "-0.286")]  # sklearn: -2/7
    assert "3 pairs" in kappas[0].get_text()
    twin = client.get(f"/api/v1/pages/books/{book['id']}").json()
    assert [d["doc_title"] for d in twin["disputed"]] == ["Alien, Director's cut", "Heat", None]
    agreement = api.get(f"/api/v1/books/{book['id']}/agreement").json()
    assert [k["name"] for k in agreement["judges"][0]["kappa_with"]] == [
        "alice@example.com",
        "bob@example.com",
    ]


def test_a_book_is_deleted_after_confirming_by_its_owner_only(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    db: Session,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (_bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    pairs = [{"query_text": "q", "doc_id": f"d{i}"} for i in range(3)]
    api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs})
    # A rater who may see the book is offered no delete, and cannot delete it.
    bob_csrf = login(client, "bob@example.com")
    seen = soup(client.get(f"/books/{book['id']}"))
    assert seen.select_one("#delete-book") is None
    refused = client.post(f"/books/{book['id']}/delete", data={"csrf_token": bob_csrf})
    assert refused.status_code == 403
    assert "Only the owner of this book may delete it." in refused.text
    client.cookies.clear()
    csrf = login(client)
    page = soup(client.get(f"/books/{book['id']}"))
    button = one(page, "#delete-book button")
    assert attr(button, "hx-post").endswith(f"/books/{book['id']}/delete")
    assert "Delete book “Movies judgements”?" in attr(button, "hx-confirm")
    confirm = soup(client.get(attr(one(page, "#delete-book"), "action")))
    assert one(confirm, ".doomed-name").get_text() == "Movies judgements"
    assert one(confirm, ".consequence").get_text().startswith("Its 3 pairs, every rating")
    form = one(confirm, "#confirm-delete-form")
    done = client.post(attr(form, "action"), data={"csrf_token": csrf}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].endswith("/books")
    # With htmx (the button's hx-post) the answer sends the browser on with HX-Redirect.
    db.expire_all()
    assert db.get(Book, book["id"]) is None
    assert db.query(Pair).filter(Pair.book_id == book["id"]).count() == 0
    assert client.get(f"/books/{book['id']}").status_code == 404
    other = make_book(api)
    htmx = client.post(
        f"/books/{other['id']}/delete", data={"csrf_token": csrf}, headers={"HX-Request": "true"}
    )
    assert htmx.status_code == 200 and htmx.headers["HX-Redirect"].endswith("/books")
