"""A team world for sharing tests: an owner, a member, an outsider, a removed member and a
disabled member, and one shared resource of every kind."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import User
from tests.fixtures.users import ApiUser, make_api_user
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id

ROLES = ("owner", "member", "outsider", "removed", "disabled")


@dataclass
class World:
    users: dict[str, ApiUser]
    team_id: int
    case_id: int
    query_id: int
    endpoint_id: int
    scorer_id: int
    book_id: int


def build_world(client: TestClient, factory: sessionmaker[Session]) -> World:
    """Create the five users, a team and one resource of each kind shared with it."""
    users = {role: make_api_user(client, factory, f"{role}@example.com") for role in ROLES}
    owner = users["owner"]
    team = owner.post("/api/v1/teams", json={"name": "Search"}).json()
    for role in ("member", "removed", "disabled"):
        response = owner.put(
            f"/api/v1/teams/{team['id']}/members", json={"email": f"{role}@example.com"}
        )
        assert response.status_code == 200, response.text
    shared = {"team_ids": [team["id"]]}
    endpoint = make_endpoint(
        owner, "http://127.0.0.1:9/movies", headers={"X-Api-Key": "s3cret"}, **shared
    )
    case = make_case(owner, endpoint["id"], scorer_id=scorer_id(owner, "NDCG@10"), **shared)
    query_id = add_queries(owner, case["id"], ["star wars"])["star wars"]
    scorer = owner.post(
        "/api/v1/scorers",
        json={"name": "Mine", "kind": "ndcg", "scale": [0, 1, 2, 3], **shared},
    ).json()
    book = owner.post("/api/v1/books", json={"name": "B", "scale": [0, 1, 2], **shared}).json()
    removed = users["removed"]
    assert owner.delete(f"/api/v1/teams/{team['id']}/members/{removed.id}").status_code == 204
    with session_scope(factory) as session:
        disabled = session.get(User, users["disabled"].id)
        assert disabled is not None
        disabled.is_disabled = True
        session.commit()
    return World(
        users=users,
        team_id=team["id"],
        case_id=case["id"],
        query_id=query_id,
        endpoint_id=endpoint["id"],
        scorer_id=scorer["id"],
        book_id=book["id"],
    )
