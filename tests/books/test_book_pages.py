"""Book pages: each agrees with its JSON twin; forms create, fill, judge, sync; bad input."""

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
from tests.support.pages import login, one, soup


def test_books_list_create_and_json_twin(api: ApiUser, client: TestClient) -> None:
    token = login(client)
    response = client.post(
        "/books",
        data={"name": "Shared", "scale": "0, 1, 2", "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303
    page = soup(client.get("/books"))
    rows = page.select("#books tbody tr")
    twin = client.get(str(one(page, "link[rel=alternate]")["href"])).json()
    assert [one(r, ".book-name").get_text() for r in rows] == [b["name"] for b in twin["books"]]
    assert twin["books"][0]["scale"] == [0, 1, 2]
    bad = client.post("/books", data={"name": "x", "scale": "2, 1", "csrf_token": token})
    assert bad.status_code == 422
    assert one(soup(bad), ".field-error[data-field=scale]")
    assert client.post("/books", data={"name": "y", "scale": "0,1"}).status_code == 403


def test_book_page_shows_agreement_counts_and_disputes(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, (bob,) = book_with_raters(api, client, session_factory, monkeypatch)
    ids = add_pairs(api, book["id"], [("q", "a"), ("q", "b"), ("q", "c")])
    for doc, mine, theirs in (("a", 0, 3), ("b", 2, 2), ("c", 1, None)):
        judge(api, book["id"], ids[("q", doc)], mine)
        judge(bob, book["id"], ids[("q", doc)], theirs)
    login(client)
    response = client.get(f"/books/{book['id']}")
    page = soup(response)
    twin = client.get(str(one(page, "link[rel=alternate]")["href"])).json()
    assert twin == api.get(f"/api/v1/pages/books/{book['id']}").json()
    assert twin["agreement"] == api.get(f"/api/v1/books/{book['id']}/agreement").json()
    assert one(page, "#pairs-multi").get_text() == "2"  # c has a "can't tell"
    raters = {
        one(r, "td").get_text(): one(r, ".unrateable").get_text()
        for r in page.select("#raters tbody tr")
    }
    assert raters == {"alice@example.com": "0", "bob@example.com": "1"}
    disputed = [r["data-pair-id"] for r in page.select("#disputed tbody tr")]
    assert disputed == [str(ids[("q", "a")])]
    assert [d["spread"] for d in twin["disputed"]] == [3.0]


def test_judging_page_forms_progress_back_and_skip(api: ApiUser, client: TestClient) -> None:
    book = make_book(api, scale_labels={"0": "Bad", "3": "Perfect"})
    ids = add_pairs(api, book["id"], [("q", "a"), ("q", "b")])
    token = login(client)
    url = f"/books/{book['id']}/judge"
    page = soup(client.get(url))
    assert one(page, "#progress").get_text() == "0 of 2 judged by you"
    first = int(str(one(page, "#pair")["data-pair-id"]))
    assert first == ids[("q", "a")]
    labels = [b.get_text(" ", strip=True) for b in page.select("#judge-form button[data-digit]")]
    assert labels == ["0 Bad", "1 1", "2 2", "3 Perfect"]
    twin = client.get(str(one(page, "link[rel=alternate]")["href"])).json()
    assert twin["pair"]["id"] == first and twin["judged_by_me"] == 0
    skip_href = str(one(page, "#skip")["href"])
    assert int(str(one(soup(client.get(skip_href)), "#pair")["data-pair-id"])) == ids[("q", "b")]
    done = client.post(url, data={"pair_id": first, "rating": "3", "csrf_token": token})
    page = soup(done)
    assert one(page, "#progress").get_text() == "1 of 2 judged by you"
    back = soup(client.get(str(one(page, "#back")["href"])))
    assert int(str(one(back, "#pair")["data-pair-id"])) == first
    assert one(back, "#judge-form button.selected").get_text(" ", strip=True) == "3 Perfect"
    client.post(url, data={"pair_id": ids[("q", "b")], "unrateable": "1", "csrf_token": token})
    assert one(soup(client.get(url)), "#all-done")
    bad = client.post(url, data={"pair_id": first, "rating": "7", "csrf_token": token})
    assert bad.status_code == 422
    assert api.get(f"/api/v1/books/{book['id']}/pairs").json()[0]["judgements"][0]["rating"] == 3


def test_populate_and_sync_forms(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, qids, _run = case_with_run(api, session_factory, {"batman": ["b1", "b2"]})
    book = make_book(api)
    token = login(client)
    filled = client.post(
        f"/books/{book['id']}/populate",
        data={"case_id": case_id, "depth": "1", "csrf_token": token},
        follow_redirects=False,
    )
    assert filled.status_code == 303  # Post/Redirect/Get: a refresh re-posts nothing
    assert filled.headers["location"].endswith("#populate-done")
    page = soup(client.get(filled.headers["location"]))
    assert one(page, ".pair-count").get_text() == "1"
    case_name = api.get(f"/api/v1/cases/{case_id}").json()["name"]
    assert one(page, "#populate-done").get_text() == (
        f"Added 1 new pair from the latest run of {case_name} (top 1 per query)."
    )
    # The form shows what was chosen.
    assert one(page, "#populate-form select[name=case_id] option[selected]")["value"] == str(
        case_id
    )
    assert one(page, "#populate-form input[name=depth]")["value"] == "1"
    again = client.post(
        f"/books/{book['id']}/populate",
        data={"case_id": case_id, "depth": "2", "csrf_token": token},
    )
    assert one(soup(again), "#populate-done").get_text() == (
        f"Added 1 new pair from the latest run of {case_name} (top 2 per query); "
        "1 was already in the book."
    )
    pair_id = api.get(f"/api/v1/books/{book['id']}/pairs").json()[0]["id"]
    judge(api, book["id"], pair_id, 2)
    synced = client.post(
        f"/books/{book['id']}/sync",
        data={"case_id": case_id, "method": "median", "user_id": "", "csrf_token": token},
        follow_redirects=False,
    )
    assert synced.status_code == 303 and synced.headers["location"].endswith("#sync-done")
    page = soup(client.get(synced.headers["location"]))
    done = one(page, "#sync-done")
    assert done.get_text() == (
        f"Wrote 1 rating into {case_name} and re-scored its latest run; 0 unchanged."
    )
    assert one(done, "a")["href"] == f"http://testserver/cases/{case_id}"
    assert one(page, "#sync-form select[name=method] option[selected]")["value"] == "median"
    assert one(page, "#sync-form select[name=case_id] option[selected]")["value"] == str(case_id)
    source = one(soup(client.get(f"/cases/{case_id}")), "#ratings-source")
    assert source["data-method"] == "median" and source["data-book-id"] == str(book["id"])
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{qids['batman']}/ratings").json()
    assert [(r["doc_id"], r["rating"]) for r in ratings["ratings"]] == [("b1", 2.0)]
    from tests.support.pages import movies_case

    empty = movies_case(api)
    refused = client.post(
        f"/books/{book['id']}/populate", data={"case_id": empty, "depth": "3", "csrf_token": token}
    )
    assert refused.status_code == 409
    page = soup(refused)
    assert "has no finished run yet" in one(page, "#populate-problem").get_text()
    assert one(page, "#populate-form input[name=depth]")["value"] == "3"
    assert one(page, "nav.mainnav")
    bad = client.post(
        f"/books/{book['id']}/sync",
        data={"case_id": case_id, "method": "rater", "user_id": "", "csrf_token": token},
    )
    assert bad.status_code == 422
    assert "user_id" in one(soup(bad), "#sync-problem").get_text()
    assert one(soup(bad), "#sync-form select[name=method] option[selected]")["value"] == "rater"


def test_someone_elses_book_pages_are_404(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    book = make_book(other_api)
    login(client)
    for url in (f"/books/{book['id']}", f"/books/{book['id']}/judge"):
        assert client.get(url).status_code == 404


def test_import_form_creates_a_book_and_refuses_bad_files(api: ApiUser, client: TestClient) -> None:
    import json

    from tests.books.test_book_io import QUEPID_BOOK

    token = login(client)
    body = {**QUEPID_BOOK, "query_doc_pairs": QUEPID_BOOK["query_doc_pairs"][1:]}
    response = client.post(
        "/books/import",
        data={"csrf_token": token},
        files={"file": ("book.json", json.dumps(body), "application/json")},
    )
    assert response.status_code == 200
    assert one(soup(response), "h1").get_text() == "Imported from Quepid"
    bad = client.post(
        "/books/import",
        data={"csrf_token": token},
        files={"file": ("book.json", b"{not json", "application/json")},
    )
    assert bad.status_code == 422
    unknown = client.post(
        "/books/import",
        data={"csrf_token": token},
        files={"file": ("book.json", json.dumps(QUEPID_BOOK), "application/json")},
    )
    assert unknown.status_code == 422  # bob@example.com has no account here
    assert "bob@example.com" in unknown.text
    assert len(api.get("/api/v1/books").json()) == 1
