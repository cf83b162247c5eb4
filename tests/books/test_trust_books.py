"""Books (#25): a book filled from a case names its grades as the case's scorer does;
"can't tell" is not coloured like a bad grade; the agreement block explains a missing alpha
and counts as the raters table does."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.books import add_pairs, case_with_run, judge, make_book
from tests.support.pages import login, one, scorer_id, soup


def test_a_book_filled_from_a_case_takes_its_scorers_labels(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, _ids, _run = case_with_run(api, session_factory, {"batman": ["b1", "b2"]})
    patched = api.patch(f"/api/v1/cases/{case_id}", json={"scorer_id": scorer_id(api, "NDCG@10")})
    assert patched.status_code == 200, patched.text
    book = make_book(api)
    assert book["scale_labels"] is None
    token = login(client)
    filled = client.post(
        f"/books/{book['id']}/populate",
        data={"case_id": case_id, "depth": "2", "csrf_token": token},
    )
    assert filled.status_code == 200
    labels = {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"}
    assert api.get(f"/api/v1/books/{book['id']}").json()["scale_labels"] == labels
    page = soup(client.get(f"/books/{book['id']}/judge"))
    buttons = [b.get_text(" ", strip=True) for b in page.select("#judge-form button[name=rating]")]
    assert buttons == ["0 Poor", "1 Fair", "2 Good", "3 Perfect"]
    # "Can't tell" is no grade: neutral, without the lowest grade's hue.
    cant = one(page, "#cant-tell")
    assert "rating-neutral" in cant["class"] and "--hue" not in str(cant.get("style", ""))

    # A book that names its grades keeps its names; a 0-1 scorer cannot name a 0-3 book.
    named = make_book(api, name="Named", scale_labels={"0": "no", "3": "yes"})
    other = make_book(api, name="Other")
    binary = api.patch(f"/api/v1/cases/{case_id}", json={"scorer_id": scorer_id(api, "P@10")})
    assert binary.status_code == 200
    for kept in (named, other):
        response = client.post(
            f"/books/{kept['id']}/populate",
            data={"case_id": case_id, "depth": "1", "csrf_token": token},
        )
        assert response.status_code == 200
        assert (
            api.get(f"/api/v1/books/{kept['id']}").json()["scale_labels"] == (kept["scale_labels"])
        )


def test_the_agreement_block_says_why_alpha_is_missing_and_counts_as_the_table(
    api: ApiUser, client: TestClient
) -> None:
    book = make_book(api)
    ids = add_pairs(api, book["id"], [("q", "a"), ("q", "b"), ("q", "c")])
    login(client)
    empty = soup(client.get(f"/books/{book['id']}"))
    assert one(empty, "#alpha-why").get_text() == "(no ratings yet)"
    judge(api, book["id"], ids[("q", "a")], 2)
    judge(api, book["id"], ids[("q", "b")], 0)
    judge(api, book["id"], ids[("q", "c")], None)  # can't tell
    page = soup(client.get(f"/books/{book['id']}"))
    assert one(page, "#alpha").get_text() == "\u2013"
    assert "needs a second rater" in one(page, "#alpha-why").get_text()
    block = one(page, "#agreement p").get_text(" ", strip=True)
    assert block.startswith("1 rater with ratings · 2 pairs rated · 0 by two or more")
    assert one(page, "#cant-tell-total").get_text() == "1"
    row = one(page, "#raters tbody tr")
    # The table counts as the block does: 2 rated, 1 "can't tell" apart (3 judgements).
    assert (one(row, ".judged").get_text(), one(row, ".unrateable").get_text()) == ("2", "1")
    assert one(row, ".judged")["title"] == "3 judgements in all"
