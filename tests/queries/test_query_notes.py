"""Notes and information need edited in place on the query row and page."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.queries.schemas import NOTES_MAX_LENGTH
from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, attr, login, movies_case, one, soup

HTMX = {"HX-Request": "true"}


def _query(api: ApiUser) -> tuple[int, int]:
    case_id = movies_case(api)
    return case_id, add_queries(api, case_id, ["star wars"])["star wars"]


def _read(api: ApiUser, case_id: int, query_id: int) -> tuple[str | None, str | None]:
    queries = api.get(f"/api/v1/cases/{case_id}/queries").json()
    found = next(q for q in queries if q["id"] == query_id)
    return found["information_need"], found["notes"]


def test_case_page_row_has_the_editor_posting_in_place(api: ApiUser, client: TestClient) -> None:
    case_id, query_id = _query(api)
    api.patch(
        f"/api/v1/cases/{case_id}/queries/{query_id}",
        json={"information_need": "The 1977 film", "notes": "check sequels"},
    )
    login(client)
    row = one(soup(client.get(f"/cases/{case_id}")), f"#query-{query_id}")
    editor = one(row, f"#query-notes-{query_id}")
    assert one(editor, ".notes-preview").get_text() == "The 1977 film"
    form = one(editor, "form.notes-form")
    assert attr(form, "hx-target") == f"#query-notes-{query_id}"
    assert attr(form, "hx-swap") == "outerHTML"
    assert one(form, "textarea[name=information_need]").get_text() == "The 1977 film"
    assert one(form, "textarea[name=notes]").get_text() == "check sequels"
    assert one(form, "input[name=csrf_token]")


def test_saving_stores_both_fields_and_re_renders_open(api: ApiUser, client: TestClient) -> None:
    case_id, query_id = _query(api)
    token = login(client)
    response = client.post(
        f"/cases/{case_id}/queries/{query_id}/notes",
        data={"csrf_token": token, "information_need": "Space opera", "notes": "<b>bold</b>"},
        headers=HTMX,
    )
    assert response.status_code == 200
    editor = one(soup(response), f"div#query-notes-{query_id}")
    assert one(editor, "details").has_attr("open")
    assert one(editor, ".saved").get_text() == "Saved."
    assert one(editor, "textarea[name=notes]").get_text() == "<b>bold</b>"
    assert _read(api, case_id, query_id) == ("Space opera", "<b>bold</b>")
    # The query page shows the same editor with the saved text.
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    assert one(page, f"#query-notes-{query_id} textarea[name=information_need]").get_text() == (
        "Space opera"
    )


def test_blank_clears(api: ApiUser, client: TestClient) -> None:
    case_id, query_id = _query(api)
    api.patch(f"/api/v1/cases/{case_id}/queries/{query_id}", json={"notes": "old"})
    token = login(client)
    client.post(
        f"/cases/{case_id}/queries/{query_id}/notes",
        data={"csrf_token": token, "information_need": "  ", "notes": ""},
        headers=HTMX,
    )
    assert _read(api, case_id, query_id) == (None, None)


def test_too_long_is_a_422_with_the_message_next_to_the_field(
    api: ApiUser, client: TestClient
) -> None:
    case_id, query_id = _query(api)
    token = login(client)
    long = "x" * (NOTES_MAX_LENGTH + 5)
    response = client.post(
        f"/cases/{case_id}/queries/{query_id}/notes",
        data={"csrf_token": token, "information_need": "kept as typed", "notes": long},
        headers=HTMX,
    )
    assert response.status_code == 422
    page = soup(response)
    assert attr(one(page, "form.notes-form"), "data-swap-422") == ""
    error = one(page, ".field-error[data-field=notes]")
    assert error.get_text() == (
        "Notes is 20,005 characters long; at most 20,000 are kept. Shorten it and save again."
    )
    assert page.select(".field-error[data-field=information_need]") == []
    assert one(page, "textarea[name=information_need]").get_text() == "kept as typed"
    assert _read(api, case_id, query_id) == (None, None)


def test_without_csrf_token_is_refused(api: ApiUser, client: TestClient) -> None:
    case_id, query_id = _query(api)
    login(client)
    response = client.post(
        f"/cases/{case_id}/queries/{query_id}/notes", data={"notes": "sneaky"}, headers=HTMX
    )
    assert response.status_code == 403
    assert _read(api, case_id, query_id) == (None, None)


def test_plain_post_redirects_to_the_query_page(api: ApiUser, client: TestClient) -> None:
    case_id, query_id = _query(api)
    token = login(client)
    response = client.post(
        f"/cases/{case_id}/queries/{query_id}/notes",
        data={"csrf_token": token, "information_need": "", "notes": "plain"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"].endswith(f"/cases/{case_id}/queries/{query_id}")
    assert _read(api, case_id, query_id) == (None, "plain")


def test_another_users_query_is_not_found(
    api: ApiUser, other_api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _query(api)
    token = login(client, other_api.email)
    response = client.post(
        f"/cases/{case_id}/queries/{query_id}/notes",
        data={"csrf_token": token, "notes": "not mine"},
        headers=HTMX,
    )
    assert response.status_code == 404
    assert _read(api, case_id, query_id) == (None, None)


def test_api_patch_keeps_the_other_field(api: ApiUser) -> None:
    case_id, query_id = _query(api)
    url = f"/api/v1/cases/{case_id}/queries/{query_id}"
    assert api.patch(url, json={"notes": "n1", "information_need": "i1"}).status_code == 200
    assert api.patch(url, json={"notes": "n2"}).status_code == 200
    assert _read(api, case_id, query_id) == ("i1", "n2")
    too_long = api.patch(url, json={"notes": "x" * (NOTES_MAX_LENGTH + 1)})
    assert too_long.status_code == 422
