"""What sharing with a team allows, route by route, for every kind of user."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.teams.team_world import ROLES, World, build_world

# Members read, run, rate and edit; only the owner deletes or changes sharing (403 for
# members); outsiders and removed members get 404; a disabled user's key is refused (401).
USE = {"owner": 200, "member": 200, "outsider": 404, "removed": 404, "disabled": 401}
# The member adds the query first (201); the owner's same text finds it (200).
CREATE = {**USE, "member": 201}
OWNER_ONLY = {**USE, "member": 403}
DELETE = {**OWNER_ONLY, "owner": 204}

# (method, path, body, expected status by role); {c} {q} {e} {s} {b} {t} are the world's ids.
ROUTES: list[tuple[str, str, Any, dict[str, int]]] = [
    ("GET", "/api/v1/cases/{c}", None, USE),
    ("PATCH", "/api/v1/cases/{c}", {"name": "Renamed"}, USE),
    ("GET", "/api/v1/cases/{c}/tries", None, USE),
    ("GET", "/api/v1/cases/{c}/queries", None, USE),
    ("POST", "/api/v1/cases/{c}/queries", {"text": "new query"}, CREATE),
    (
        "PUT",
        "/api/v1/cases/{c}/queries/{q}/ratings",
        {"ratings": [{"doc_id": "d1", "rating": 2}]},
        USE,
    ),
    ("GET", "/api/v1/cases/{c}/queries/{q}/ratings", None, USE),
    ("GET", "/api/v1/cases/{c}/runs", None, USE),
    ("PATCH", "/api/v1/cases/{c}", {"team_ids": []}, OWNER_ONLY),
    ("DELETE", "/api/v1/cases/{c}", None, DELETE),
    ("GET", "/api/v1/search-endpoints/{e}", None, USE),
    ("PATCH", "/api/v1/search-endpoints/{e}", {"timeout_s": 5}, USE),
    ("PATCH", "/api/v1/search-endpoints/{e}", {"team_ids": ["{t}"]}, OWNER_ONLY),
    ("GET", "/api/v1/scorers/{s}", None, USE),
    ("PATCH", "/api/v1/scorers/{s}", {"name": "Ours"}, USE),
    ("PATCH", "/api/v1/scorers/{s}", {"team_ids": []}, OWNER_ONLY),
    ("DELETE", "/api/v1/scorers/{s}", None, DELETE),
    ("GET", "/api/v1/books/{b}", None, USE),
    ("PATCH", "/api/v1/books/{b}", {"name": "Ours"}, USE),
    ("POST", "/api/v1/books/{b}/pairs", {"pairs": [{"query_text": "q", "doc_id": "1"}]}, USE),
    ("GET", "/api/v1/books/{b}/pairs", None, USE),
    ("PATCH", "/api/v1/books/{b}", {"team_ids": []}, OWNER_ONLY),
    ("DELETE", "/api/v1/books/{b}", None, DELETE),
    ("GET", "/api/v1/cases/{c}/tries/1", None, USE),
    ("PATCH", "/api/v1/cases/{c}/queries/{q}", {"notes": "seen by all"}, USE),
    # The member deletes the query first; the owner then finds it gone.
    ("DELETE", "/api/v1/cases/{c}/queries/{q}", None, {**USE, "member": 204, "owner": 404}),
    ("GET", "/api/v1/cases/{c}/ratings/export?format=csv", None, USE),
    ("GET", "/api/v1/pages/cases/{c}", None, USE),
    ("POST", "/api/v1/score", {"scorer_id": "{s}", "docs": ["a"], "ratings": {"a": 3}}, USE),
    ("GET", "/api/v1/books/{b}/agreement", None, USE),
    ("GET", "/api/v1/books/{b}/next", None, {**USE, "owner": 204, "member": 204}),
    ("GET", "/api/v1/teams/{t}", None, USE),
    ("PATCH", "/api/v1/teams/{t}", {"name": "Renamed"}, OWNER_ONLY),
    ("PUT", "/api/v1/teams/{t}/members", {"email": "outsider@example.com"}, OWNER_ONLY),
    ("GET", "/api/v1/admin/users", None, {**{r: 403 for r in ROLES}, "disabled": 401}),
]


def _fill(value: Any, world: World) -> Any:
    ids = {
        "{c}": world.case_id,
        "{q}": world.query_id,
        "{e}": world.endpoint_id,
        "{s}": world.scorer_id,
        "{b}": world.book_id,
        "{t}": world.team_id,
    }
    if isinstance(value, str) and value in ids:
        return ids[value]
    if isinstance(value, str):
        for mark, number in ids.items():
            value = value.replace(mark, str(number))
        return value
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, world) for v in value]
    return value


@pytest.mark.parametrize(("method", "path", "body", "expected"), ROUTES)
def test_route_answers_each_kind_of_user(
    client: TestClient,
    session_factory: sessionmaker[Session],
    method: str,
    path: str,
    body: Any,
    expected: dict[str, int],
) -> None:
    world = build_world(client, session_factory)
    url = _fill(path, world)
    json_body = None if body is None else _fill(body, world)
    # The owner goes last: its DELETE really deletes.
    for role in ("outsider", "removed", "disabled", "member", "owner"):
        user = world.users[role]
        response = user.client.request(method, url, json=json_body, headers=user.headers)
        assert response.status_code == expected[role], (role, response.text)
        if response.status_code in (403, 404):
            assert isinstance(response.json()["detail"], str)


def test_lists_show_shared_things_to_members_only(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    lists = {
        "/api/v1/cases": world.case_id,
        "/api/v1/search-endpoints": world.endpoint_id,
        "/api/v1/scorers": world.scorer_id,
        "/api/v1/books": world.book_id,
    }
    for url, wanted in lists.items():
        for role in ("owner", "member"):
            rows = world.users[role].get(url).json()
            assert [r["team_ids"] for r in rows if r["id"] == wanted] == [[world.team_id]], url
        for role in ("outsider", "removed"):
            assert wanted not in [r["id"] for r in world.users[role].get(url).json()], url
        assert world.users["disabled"].get(url).status_code == 401


def test_endpoint_secrets_stay_write_only_for_members(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    read = world.users["member"].get(f"/api/v1/search-endpoints/{world.endpoint_id}").json()
    assert read["header_names"] == ["X-Api-Key"]
    assert "s3cret" not in str(read) and "headers" not in read


def test_member_edit_is_seen_by_the_owner_and_ratings_name_the_rater(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    url = f"/api/v1/cases/{world.case_id}/queries/{world.query_id}/ratings"
    assert member.put(url, json={"ratings": [{"doc_id": "d7", "rating": 3}]}).status_code == 200
    (rating,) = owner.get(url).json()["ratings"]
    assert rating["doc_id"] == "d7" and rating["rating"] == 3
    assert rating["rated_by"] == {"user_id": member.id, "email": "member@example.com"}
    assert rating["rated_at"] is not None


def test_a_removed_member_loses_access_at_their_next_request(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    case_url = f"/api/v1/cases/{world.case_id}"
    assert member.get(case_url).status_code == 200
    assert owner.delete(f"/api/v1/teams/{world.team_id}/members/{member.id}").status_code == 204
    assert member.get(case_url).status_code == 404
    assert member.get(f"/api/v1/teams/{world.team_id}").status_code == 404


def test_unsharing_takes_effect_at_once_and_deleting_a_team_keeps_resources(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    book_url = f"/api/v1/books/{world.book_id}"
    assert owner.patch(book_url, json={"team_ids": []}).json()["team_ids"] == []
    assert member.get(book_url).status_code == 404
    assert owner.delete(f"/api/v1/teams/{world.team_id}").status_code == 204
    assert member.get(f"/api/v1/cases/{world.case_id}").status_code == 404
    assert owner.get(f"/api/v1/cases/{world.case_id}").json()["team_ids"] == []
    assert owner.get(book_url).status_code == 200


def test_sharing_with_a_team_you_are_not_in_is_404_and_creates_nothing(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    world = build_world(client, session_factory)
    outsider = world.users["outsider"]
    before = len(outsider.get("/api/v1/books").json())
    response = outsider.post(
        "/api/v1/books", json={"name": "x", "scale": [0, 1], "team_ids": [world.team_id]}
    )
    assert response.status_code == 404
    assert response.json()["detail"] == f"No team with id {world.team_id}."
    assert len(outsider.get("/api/v1/books").json()) == before
    mine = outsider.post("/api/v1/books", json={"name": "y", "scale": [0, 1]}).json()
    for team_ids in ([world.team_id], [2**40], [0]):
        patched = outsider.patch(f"/api/v1/books/{mine['id']}", json={"team_ids": team_ids})
        assert patched.status_code == 404, team_ids


@pytest.mark.parametrize("role", ROLES)
def test_every_role_can_reach_its_own_account(
    client: TestClient, session_factory: sessionmaker[Session], role: str
) -> None:
    world = build_world(client, session_factory)
    expected = 401 if role == "disabled" else 200
    assert world.users[role].get("/api/v1/me").status_code == expected


@pytest.mark.runner
def test_a_member_runs_a_shared_case_and_the_owner_sees_the_run(
    client: TestClient, session_factory: sessionmaker[Session], movies_engine: Any
) -> None:
    world = build_world(client, session_factory)
    owner, member = world.users["owner"], world.users["member"]
    endpoint = f"/api/v1/search-endpoints/{world.endpoint_id}"
    # The member points the shared endpoint at the engine; its secret is dropped with the
    # old origin, so the member never gets to send it anywhere.
    moved = member.patch(endpoint, json={"url": movies_engine.index_url})
    assert moved.status_code == 200 and moved.json()["header_names"] == []
    run = member.post(f"/api/v1/cases/{world.case_id}/runs?wait=true")
    assert run.status_code == 200, run.text
    assert run.json()["status"] == "finished"
    (listed,) = owner.get(f"/api/v1/cases/{world.case_id}/runs").json()
    assert listed["id"] == run.json()["id"]
    outsider = world.users["outsider"]
    assert outsider.post(f"/api/v1/cases/{world.case_id}/runs").status_code == 404
