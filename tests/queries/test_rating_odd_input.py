"""A NUL in the rating form's doc id is stored as U+FFFD, like engine documents, never a 500."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)


def test_nul_in_the_doc_id_of_a_rating_form(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    query_id = add_queries(api, case_id, ["star wars"])["star wars"]
    finished_run(
        session_factory,
        case_id,
        {query_id: {"status": "unscored", "docs": [doc("1", "A", 1)]}},
        scorer=scorer_id(api, "Classic"),
    )
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}"))
    form = page.select(".doc form.rate")[0]
    fields = {str(i["name"]): str(i["value"]) for i in form.select("input[type=hidden]")}
    fields["doc_id"] = "a\x00b"
    answer = client.post(
        str(form["action"]), data={**fields, "rating": "10"}, follow_redirects=False
    )
    assert answer.status_code < 500
    ratings = api.get(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings").json()["ratings"]
    assert [r["doc_id"] for r in ratings] == ["a\ufffdb"]
    assert one(soup(client.get(f"/cases/{case_id}/queries/{query_id}")), "h1")
