"""The Teams page, the "Shared with" control, the cases filter, and pages per kind of user."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import PASSWORD, ApiUser
from tests.support.pages import attr, doc, finished_run, login, one, soup
from tests.teams.team_world import World, build_world

PAGES = [
    "/cases/{c}",
    "/scorers/{s}",
    "/endpoints/{e}",
    "/books/{b}",
    "/sharing/case/{c}",
    "/sharing/scorer/{s}",
    "/sharing/endpoint/{e}",
    "/sharing/book/{b}",
]
EXPECTED = {"owner": 200, "member": 200, "outsider": 404, "removed": 404}


def _url(path: str, world: World) -> str:
    return (
        path.replace("{c}", str(world.case_id))
        .replace("{s}", str(world.scorer_id))
        .replace("{e}", str(world.endpoint_id))
        .replace("{b}", str(world.book_id))
    )


@pytest.mark.parametrize("path", PAGES)
def test_pages_answer_each_kind_of_user(
    client: TestClient, session_factory: sessionmaker[Session], path: str
) -> None:
    world = build_world(client, session_factory)
    url = _url(path, world)
    for role, status in EXPECTED.items():
        login(client, f"{role}@example.com")
        assert client.get(url).status_code == status, role
    token = one(soup(client.get("/login")), "input[name=csrf_token]")["value"]
    refused = client.post(
        "/login",
        data={"email": "disabled@example.com", "password": PASSWORD, "csrf_token": str(token)},
        follow_redirects=False,
    )
    assert refused.status_code == 400


def test_members_see_shared_cases_and_the_filter(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    member = world.users["member"]
    endpoint = member.post(
        "/api/v1/search-endpoints",
        json={"name": "own", "engine": "solr", "url": "http://127.0.0.1:9/solr/x"},
    ).json()
    own = member.post(
        "/api/v1/cases",
        json={"name": "Own", "search_endpoint_id": endpoint["id"], "query_template": "q=#$query##"},
    ).json()
    login(client, "member@example.com")

    def listed(query: str) -> list[str]:
        page = soup(client.get(f"/{query}"))
        return [attr(row, "data-case-id") for row in page.select(".case-row")]

    assert listed("") == [str(own["id"]), str(world.case_id)]
    assert listed("?show=mine") == [str(own["id"])]
    assert listed(f"?show=team-{world.team_id}") == [str(world.case_id)]
    page = soup(client.get("/"))
    row = one(page, f"tr[data-case-id='{world.case_id}']")
    assert one(row, ".tag.shared").get_text() == "shared"
    filters = [a.get_text() for a in page.select("#case-filter a")]
    assert filters == ["All", "Mine", "Search"]
    twin = member.get("/api/v1/pages/cases", params={"show": "mine"}).json()
    assert [c["id"] for c in twin["cases"]] == [own["id"]] and twin["show"] == "mine"


def test_the_owner_shares_from_the_settings_and_members_cannot(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    token = login(client, "member@example.com")
    shown = soup(client.get(f"/sharing/book/{world.book_id}"))
    assert one(shown, ".shared-teams").get_text().startswith("Search")
    refused = client.post(
        f"/sharing/book/{world.book_id}", data={"csrf_token": token}, follow_redirects=False
    )
    assert refused.status_code == 403
    assert member.get(f"/api/v1/books/{world.book_id}").status_code == 200
    token = login(client, "owner@example.com")
    book_page = soup(client.get(f"/books/{world.book_id}"))
    link = attr(one(book_page, ".shared-with-link"), "href")
    assert link.endswith(f"/sharing/book/{world.book_id}")
    form = soup(client.get(f"/sharing/book/{world.book_id}", headers={"HX-Request": "true"}))
    assert attr(one(form, "input[name=team_id]"), "value") == str(world.team_id)
    assert one(form, "input[name=team_id]").has_attr("checked")
    unshared = client.post(
        f"/sharing/book/{world.book_id}", data={"csrf_token": token}, follow_redirects=False
    )
    assert unshared.status_code == 303
    assert owner.get(f"/api/v1/books/{world.book_id}").json()["team_ids"] == []
    assert member.get(f"/api/v1/books/{world.book_id}").status_code == 404
    client.post(
        f"/sharing/book/{world.book_id}",
        data={"csrf_token": token, "team_id": str(world.team_id)},
    )
    assert member.get(f"/api/v1/books/{world.book_id}").status_code == 200
    bad = client.post(f"/sharing/book/{world.book_id}", data={"csrf_token": token, "team_id": "x"})
    assert bad.status_code == 404


def test_teams_page_creates_a_team_and_manages_members(
    api: ApiUser, other_api: ApiUser, client: TestClient
) -> None:
    token = login(client)
    assert one(soup(client.get("/teams")), "#no-teams")
    created = client.post("/teams", data={"name": "Relevance", "csrf_token": token})
    page = soup(created)
    team = one(page, ".team")
    assert one(team, ".team-name").get_text() == "Relevance"
    team_id = attr(team, "data-team-id")
    unknown = client.post(
        f"/teams/{team_id}/members",
        data={"email": "nobody@example.com", "role": "member", "csrf_token": token},
    )
    assert unknown.status_code == 404
    assert (
        one(soup(unknown), "#team-error").get_text()
        == "No user with the email 'nobody@example.com'."
    )
    added = soup(
        client.post(
            f"/teams/{team_id}/members",
            data={"email": "bob@example.com", "role": "member", "csrf_token": token},
        )
    )
    assert [td.get_text() for td in added.select(".member-email")] == [
        "alice@example.com",
        "bob@example.com",
    ]
    leave = client.post(f"/teams/{team_id}/members/{api.id}/remove", data={"csrf_token": token})
    assert leave.status_code == 409
    assert "at least one owner" in one(soup(leave), "#team-error").get_text()
    removed = soup(
        client.post(f"/teams/{team_id}/members/{other_api.id}/remove", data={"csrf_token": token})
    )
    assert [td.get_text() for td in removed.select(".member-email")] == ["alice@example.com"]
    empty = client.post("/teams", data={"name": "  ", "csrf_token": token})
    assert empty.status_code == 422


def test_the_case_page_names_the_rater_on_hover(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    scorer = owner.get(f"/api/v1/cases/{world.case_id}").json()["scorer_id"]
    docs = [doc("d1", "One", 1), doc("d2", "Two", 2)]
    outcomes = {world.query_id: {"text": "star wars", "docs": docs}}
    finished_run(session_factory, world.case_id, outcomes, scorer=scorer)
    url = f"/api/v1/cases/{world.case_id}/queries/{world.query_id}/ratings"
    assert member.put(url, json={"ratings": [{"doc_id": "d2", "rating": 3}]}).status_code == 200
    login(client, "owner@example.com")
    page = soup(client.get(f"/cases/{world.case_id}/queries/{world.query_id}/results"))
    rated = one(page, "li[data-doc-id='d2'] button.rating.selected")
    assert attr(rated, "title") == "Rated 3 by member@example.com"
    assert one(page, "li[data-doc-id='d1']").select("button.rating.selected") == []
