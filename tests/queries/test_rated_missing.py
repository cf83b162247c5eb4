"""Rated docs the latest run did not return: counted from the database, fetched by id lazily."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.engine_fixtures import MoviesEngine
from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    attr,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)

# Two films of the demo corpus, by their index id.
LONE_STAR, BRIGHT_STAR = "555", "1384"
GONE = "no-such-movie-42"


def _case(
    api: ApiUser, factory: sessionmaker[Session], url: str, ratings: Mapping[str, float]
) -> tuple[int, int]:
    """A case whose one run returned docs 1 and 2 for "star"; ``ratings`` are set on top."""
    case_id = movies_case(api, url)
    query_id = add_queries(api, case_id, ["star"])["star"]
    docs = [doc("1", "Returned one", 1), doc("2", "Returned two", 2)]
    finished_run(
        factory,
        case_id,
        {query_id: {"status": "unscored", "docs": docs}},
        scorer=scorer_id(api, "Classic"),
    )
    body = {"ratings": [{"doc_id": d, "rating": r} for d, r in ratings.items()]}
    response = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
    assert response.status_code == 200, response.text
    return case_id, query_id


def _results(client: TestClient, case_id: int, query_id: int) -> BeautifulSoup:
    return soup(client.get(f"/cases/{case_id}/queries/{query_id}/results"))


def test_count_comes_from_the_database_and_the_list_loads_on_opening(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # No engine listens at this URL: rendering the results must not ask it anything.
    ratings = {"1": 9, LONE_STAR: 7, BRIGHT_STAR: 3, GONE: 5}
    case_id, query_id = _case(api, session_factory, "http://127.0.0.1:9/movies", ratings)
    login(client)
    details = one(_results(client, case_id, query_id), f"details#rated-missing-{query_id}")
    assert one(details, "summary .n").get_text() == "3"
    assert attr(details, "hx-trigger") == "toggle once"
    assert attr(details, "hx-get").endswith(f"/cases/{case_id}/queries/{query_id}/rated-missing")
    assert not details.has_attr("open")


def test_no_details_when_every_rated_doc_was_returned(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case(api, session_factory, "http://127.0.0.1:9/movies", {"2": 4})
    login(client)
    assert _results(client, case_id, query_id).select("details.rated-missing") == []


def test_fetched_docs_show_fields_rating_and_marks_from_the_real_engine(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    movies_engine: MoviesEngine,
) -> None:
    ratings = {"1": 9, LONE_STAR: 7, BRIGHT_STAR: 3, GONE: 5}
    case_id, query_id = _case(api, session_factory, movies_engine.index_url, ratings)
    login(client)
    response = client.get(f"/cases/{case_id}/queries/{query_id}/rated-missing")
    assert response.status_code == 200
    page = soup(response)
    returned = page.select("li.missing-doc.not-returned")
    # Highest rating first.
    assert [attr(li, "data-doc-id") for li in returned] == [LONE_STAR, BRIGHT_STAR]
    assert [one(li, ".doc-title").get_text() for li in returned] == ["Lone Star", "Bright Star"]
    assert one(returned[0], ".missing-mark").get_text() == "rated, not returned"
    assert one(returned[0], "button.rating.selected").get_text() == "7"
    fields = {
        dt.get_text(): dd.get_text()
        for dt, dd in zip(
            returned[0].select(".doc-fields dt"), returned[0].select(".doc-fields dd"), strict=True
        )
    }
    assert fields["director"] == "John Sayles"
    form = one(returned[0], "form.rate")
    assert attr(one(form, "input[name=open_missing]"), "value") == "1"
    assert attr(form, "hx-target") == f"#results-{query_id}"
    gone = one(page, "li.missing-doc.not-found")
    assert attr(gone, "data-doc-id") == GONE
    assert one(gone, ".not-found-mark").get_text() == "not found in the index"
    assert one(gone, "button.rating.selected").get_text() == "5"
    assert page.select(".engine-error") == []


def test_json_twin_lists_the_same_docs(
    api: ApiUser, session_factory: sessionmaker[Session], movies_engine: MoviesEngine
) -> None:
    ratings = {LONE_STAR: 7, GONE: 5}
    case_id, query_id = _case(api, session_factory, movies_engine.index_url, ratings)
    body: dict[str, Any] = api.get(
        f"/api/v1/pages/cases/{case_id}/queries/{query_id}/rated-missing"
    ).json()
    assert body["total"] == 2
    assert [(d["id"], d["title"], d["rating"]) for d in body["docs"]] == [
        (LONE_STAR, "Lone Star", 7.0)
    ]
    assert [d["id"] for d in body["not_found"]] == [GONE]
    assert body["error"] is None


def test_engine_down_gives_a_short_message_not_a_500(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    engine_down_url: str,
) -> None:
    case_id, query_id = _case(api, session_factory, f"{engine_down_url}/movies", {LONE_STAR: 7})
    login(client)
    response = client.get(f"/cases/{case_id}/queries/{query_id}/rated-missing")
    assert response.status_code == 200
    message = one(soup(response), ".engine-error").get_text()
    assert message.startswith("The engine could not be asked for them: cannot connect to")
    assert soup(response).select("li.missing-doc") == []


def test_rating_a_missing_doc_keeps_the_list_open_and_updates_the_count(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, query_id = _case(api, session_factory, "http://127.0.0.1:9/movies", {LONE_STAR: 7})
    token = login(client)
    rated = client.post(
        f"/cases/{case_id}/queries/{query_id}/ratings",
        data={"csrf_token": token, "doc_id": LONE_STAR, "rating": "", "open_missing": "1"},
        headers={"HX-Request": "true"},
    )
    assert rated.status_code == 200
    # Cleared: nothing rated is missing any more.
    assert soup(rated).select("details.rated-missing") == []
    again = client.post(
        f"/cases/{case_id}/queries/{query_id}/ratings",
        data={"csrf_token": token, "doc_id": BRIGHT_STAR, "rating": "4", "open_missing": "1"},
        headers={"HX-Request": "true"},
    )
    details = one(soup(again), f"details#rated-missing-{query_id}")
    assert details.has_attr("open")
    assert attr(details, "hx-trigger") == "load"
    assert one(details, "summary .n").get_text() == "1"


def test_an_engine_error_answer_is_shown_short(
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    movies_engine: MoviesEngine,
) -> None:
    url = f"{movies_engine.url}/no_such_index"
    case_id, query_id = _case(api, session_factory, url, {LONE_STAR: 7})
    login(client)
    response = client.get(f"/cases/{case_id}/queries/{query_id}/rated-missing")
    assert response.status_code == 200
    message = one(soup(response), ".engine-error").get_text()
    assert message.startswith("The engine could not be asked for them: HTTP 404 from")
    assert len(message) < 400
