"""Teams: create, rename, members and roles, and the rule that a team keeps an owner."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser, make_api_user
from tests.support.api import make_case, make_endpoint


def _team(api: ApiUser, name: str = "Search") -> dict[str, Any]:
    response = api.post("/api/v1/teams", json={"name": name})
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def test_the_creator_is_the_owner(api: ApiUser) -> None:
    team = _team(api)
    assert team["name"] == "Search"
    assert team["members"] == [{"user_id": api.id, "email": "alice@example.com", "role": "owner"}]
    assert [t["id"] for t in api.get("/api/v1/teams").json()] == [team["id"]]


def test_adding_a_member_twice_changes_only_the_role(api: ApiUser, other_api: ApiUser) -> None:
    team = _team(api)
    url = f"/api/v1/teams/{team['id']}/members"
    added = api.put(url, json={"email": "BOB@example.com", "role": "member"})
    assert added.status_code == 200
    again = api.put(url, json={"email": "bob@example.com", "role": "member"}).json()
    assert again == added.json()
    promoted = api.put(url, json={"email": "bob@example.com", "role": "owner"}).json()
    roles = {m["email"]: m["role"] for m in promoted["members"]}
    assert roles == {"alice@example.com": "owner", "bob@example.com": "owner"}
    assert [t["id"] for t in other_api.get("/api/v1/teams").json()] == [team["id"]]


def test_unknown_email_is_404_with_a_sentence(api: ApiUser) -> None:
    team = _team(api)
    response = api.put(f"/api/v1/teams/{team['id']}/members", json={"email": "nobody@x.org"})
    assert response.status_code == 404
    assert response.json()["detail"] == "No user with the email 'nobody@x.org'."


def test_the_last_owner_can_neither_leave_nor_step_down(api: ApiUser, other_api: ApiUser) -> None:
    team = _team(api)
    base = f"/api/v1/teams/{team['id']}"
    api.put(f"{base}/members", json={"email": "bob@example.com", "role": "member"})
    left = api.delete(f"{base}/members/{api.id}")
    assert left.status_code == 409
    assert "at least one owner" in left.json()["detail"]
    demoted = api.put(f"{base}/members", json={"email": "alice@example.com", "role": "member"})
    assert demoted.status_code == 409
    assert {m["role"] for m in api.get(base).json()["members"]} == {"owner", "member"}
    # With a second owner, the first may step down and then leave.
    api.put(f"{base}/members", json={"email": "bob@example.com", "role": "owner"})
    assert api.put(f"{base}/members", json={"email": "alice@example.com", "role": "member"}).json()[
        "members"
    ] == [
        {"user_id": other_api.id, "email": "bob@example.com", "role": "owner"},
        {"user_id": api.id, "email": "alice@example.com", "role": "member"},
    ]
    assert api.delete(f"{base}/members/{api.id}").status_code == 204
    assert api.get(base).status_code == 404


def test_members_cannot_manage_the_team_and_outsiders_cannot_see_it(
    api: ApiUser, other_api: ApiUser, client: Any, session_factory: sessionmaker[Session]
) -> None:
    carol = make_api_user(client, session_factory, "carol@example.com")
    team = _team(api)
    base = f"/api/v1/teams/{team['id']}"
    api.put(f"{base}/members", json={"email": "bob@example.com"})
    for response in (
        other_api.patch(base, json={"name": "Mine"}),
        other_api.delete(base),
        other_api.put(f"{base}/members", json={"email": "carol@example.com"}),
        other_api.delete(f"{base}/members/{api.id}"),
    ):
        assert response.status_code == 403, response.text
    for response in (
        carol.get(base),
        carol.patch(base, json={"name": "Mine"}),
        carol.delete(base),
        carol.put(f"{base}/members", json={"email": "carol@example.com"}),
        api.get("/api/v1/teams/99999999"),
        api.get(f"/api/v1/teams/{2**40}"),
    ):
        assert response.status_code == 404, response.text
    # A member may leave on their own.
    assert other_api.delete(f"{base}/members/{other_api.id}").status_code == 204
    assert api.patch(base, json={"name": "Renamed"}).json()["name"] == "Renamed"


@pytest.mark.parametrize(
    "body",
    [{}, {"name": ""}, {"name": "x" * 201}, {"name": "x", "surprise": 1}, {"name": "a\x00b"}],
)
def test_bad_team_bodies_are_422(api: ApiUser, body: dict[str, Any]) -> None:
    assert api.post("/api/v1/teams", json=body).status_code == 422
    assert api.get("/api/v1/teams").json() == []


def test_bad_member_bodies_are_422(api: ApiUser) -> None:
    team = _team(api)
    url = f"/api/v1/teams/{team['id']}/members"
    for body in ({"email": "bob@example.com", "role": "admin"}, {"role": "member"}, {"email": ""}):
        assert api.put(url, json=body).status_code == 422, body


# Key and user (2), cases (1), their teams (1), query counts (1), latest runs (1), tries (1),
# schedules with their next run (1).
LIST_BUDGET = 8


def test_listing_200_shared_cases_takes_a_constant_number_of_statements(
    api: ApiUser, other_api: ApiUser, app: FastAPI, session_factory: sessionmaker[Session]
) -> None:
    team = _team(api)
    api.put(f"/api/v1/teams/{team['id']}/members", json={"email": "bob@example.com"})
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")

    def count_listing() -> tuple[int, int]:
        statements: list[str] = []

        def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if not statement.lstrip().upper().startswith(("SAVEPOINT", "RELEASE", "ROLLBACK")):
                statements.append(statement)

        event.listen(app.state.engine, "before_cursor_execute", count)
        try:
            listed = other_api.get("/api/v1/cases").json()
        finally:
            event.remove(app.state.engine, "before_cursor_execute", count)
        return len(listed), len(statements)

    make_case(api, endpoint["id"], team_ids=[team["id"]])
    count_listing()  # the key's first use records last_used_at once
    one_case = count_listing()
    for n in range(199):
        make_case(api, endpoint["id"], name=f"Case {n}", team_ids=[team["id"]])
    count_listing()  # on a slow machine the key's last use may be due again by now
    many = count_listing()
    assert one_case[0] == 1 and many[0] == 200
    assert many[1] == one_case[1] <= LIST_BUDGET
    print(f"listing 200 shared cases: {many[1]} SQL statements")
