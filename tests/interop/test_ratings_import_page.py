"""Importing ratings from the case page: preview first, then import; export links."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, attr, login, movies_case, one, scorer_id, soup


def _post(client: TestClient, case_id: int, token: str, body: bytes, **fields: str) -> Any:
    return client.post(
        f"/cases/{case_id}/ratings/import",
        data={"csrf_token": token, **fields},
        files={"file": ("ratings.csv", body, "text/csv")},
    )


def test_preview_then_import_from_the_case_page(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api, scorer_id=scorer_id(api, "NDCG@10"))
    ids = add_queries(api, case_id, ["alien"])
    token = login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    form = one(page, "#ratings-import-form")
    assert attr(form, "enctype") == "multipart/form-data"
    export = attr(one(page, "#ratings-io a.export-trec"), "href")
    assert export.endswith(f"/api/v1/cases/{case_id}/ratings/export?format=trec")

    body = b"query,docid,rating\nalien,348,3\nalien,349,1\nthe thing,1091,2\n"
    preview = _post(client, case_id, token, body, action="preview")
    shown = soup(preview)
    assert one(shown, "#import-summary .ratings-set").get_text() == "3"
    assert one(shown, "#import-summary .queries-created").get_text() == "1"
    assert "Nothing has been written." in shown.get_text()
    assert (
        api.get(f"/api/v1/cases/{case_id}/queries/{ids['alien']}/ratings").json()["ratings"] == []
    )

    done = soup(_post(client, case_id, token, body, action="import"))
    assert one(done, "h1").get_text().startswith("Ratings imported")
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{ids['alien']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == {"348": 3, "349": 1}
    exported = client.get(export)  # the export link works with the browser's session
    assert exported.status_code == 200 and f"{ids['alien']} 0 348 3" in exported.text


def test_bad_lines_are_listed_on_the_page(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api, scorer_id=scorer_id(api, "NDCG@10"))
    token = login(client)
    answer = _post(client, case_id, token, b"query,docid,rating\nalien,1,abc\nalien,2,9\n")
    assert answer.status_code == 422
    page = soup(answer)
    assert one(page, "#import-problem").get_text().startswith("2 bad lines")
    rows = [
        [td.get_text() for td in tr.select("td")] for tr in page.select("#import-errors tbody tr")
    ]
    assert rows == [
        ["2", "the rating 'abc' is not a number"],
        ["3", "the rating 9 is outside the scorer's scale [0, 3]"],
    ]
    mixed = _post(client, case_id, token, b"query,docid,rating\nalien,1,2\nnew,2,1\nalien,3,x\n")
    summary = " ".join(one(soup(mixed), "#import-summary").get_text().split())
    assert summary.startswith("Without the bad lines, importing this file would set 2 ratings")
    assert summary.endswith("create 2 new queries (2 lines).")
    refused = client.post(
        f"/cases/{case_id}/ratings/import",
        data={"csrf_token": "wrong"},
        files={"file": ("r.csv", b"query,docid,rating\n", "text/csv")},
    )
    assert refused.status_code == 403


def test_rre_and_qrels_by_text_from_the_case_page(api: ApiUser, client: TestClient) -> None:
    case_id = movies_case(api, scorer_id=scorer_id(api, "NDCG@10"))
    ids = add_queries(api, case_id, ["alien"])
    token = login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    formats = [
        attr(o, "value") for o in page.select("#ratings-import-form select[name=format] option")
    ]
    assert formats == ["csv", "trec", "rre"]

    rre = (
        b'{"index": "movies", "topics": [{"query_groups": [{"name": "g", '
        b'"queries": [{"template": "t.json", "placeholders": {"$query": "alien"}}], '
        b'"relevant_documents": {"348": {"gain": 3}}}]}]}'
    )
    done = _post(client, case_id, token, rre, action="import", format="rre")
    assert done.status_code == 200, done.text
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{ids['alien']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == {"348": 3}

    qrels = b"# from elsewhere\nalien 0 349 2\n"
    shown = soup(_post(client, case_id, token, qrels, action="preview", format="trec"))
    assert one(shown, "#import-query-match").get_text() == (
        "QIDs matched by text: 0 by query id, 1 by query text."
    )


def test_an_import_after_a_preview_uses_the_kept_file_and_keeps_the_navigation(
    api: ApiUser, client: TestClient
) -> None:
    case_id = movies_case(api, scorer_id=scorer_id(api, "NDCG@10"))
    ids = add_queries(api, case_id, ["alien"])
    token = login(client)
    qrels = f"{ids['alien']} 0 348 3\nalien 0 349 1\n".encode()
    preview = client.post(
        f"/cases/{case_id}/ratings/import",
        data={"csrf_token": token, "action": "preview", "format": "trec"},
        files={"file": ("mine.qrels", qrels, "text/plain")},
    )
    shown = soup(preview)
    assert one(shown, "nav.mainnav a[href='http://testserver/']")  # the site navigation
    form = one(shown, "#ratings-import-form")
    assert one(form, "#kept-file strong").get_text() == "mine.qrels"
    assert attr(one(form, "select[name=format] option[selected]"), "value") == "trec"
    assert not one(form, "input[type=file]").has_attr("required")
    kept = {str(field["name"]): str(field["value"]) for field in form.select("input[type=hidden]")}
    assert set(kept) == {"csrf_token", "upload_token", "upload_name"}
    # Import as the browser sends it: the file input left empty, the kept file's token.
    done = client.post(
        f"/cases/{case_id}/ratings/import",
        data={**kept, "action": "import", "format": "trec"},
        files={"file": ("", b"", "application/octet-stream")},
    )
    assert done.status_code == 200, done.text
    page = soup(done)
    assert one(page, "h1").get_text().startswith("Ratings imported")
    assert one(page, "#import-summary .ratings-set").get_text() == "2"
    assert one(page, "nav.mainnav")
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{ids['alien']}/ratings").json()
    assert {r["doc_id"]: r["rating"] for r in ratings["ratings"]} == {"348": 3, "349": 1}
    # Imported: the kept copy is gone, and so is another account's or a made-up token's.
    again = client.post(
        f"/cases/{case_id}/ratings/import",
        data={**kept, "action": "import", "format": "trec"},
    )
    assert again.status_code == 422
    assert (
        one(soup(again), "#import-problem")
        .get_text()
        .startswith("The file from the preview is no longer kept")
    )
    assert one(soup(again), "nav.mainnav")
    nothing = client.post(
        f"/cases/{case_id}/ratings/import", data={"csrf_token": token, "action": "import"}
    )
    assert one(soup(nothing), "#import-problem").get_text() == "Choose a file to import."
