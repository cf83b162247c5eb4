"""Each test's rows live in its own transaction, rolled back at the end; runner tests commit."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import User
from tests.fixtures.users import ApiUser


def _committed_users(app: FastAPI) -> list[str]:
    # A connection of its own sees only what was committed.
    with app.state.engine.connect() as conn:
        return list(conn.scalars(select(User.email)))


def test_a_tests_rows_are_visible_to_it_but_never_committed(
    app: FastAPI, api: ApiUser, db: Session
) -> None:
    created = api.post(
        "/api/v1/search-endpoints",
        json={"name": "e", "engine": "solr", "url": "http://solr:8983/x"},
    )
    assert created.status_code == 201
    assert db.scalar(select(func.count()).select_from(User)) == 1
    assert api.get("/api/v1/search-endpoints").json()[0]["id"] == created.json()["id"]
    assert _committed_users(app) == []


def test_starting_a_run_in_a_rolled_back_test_says_to_mark_it(api: ApiUser) -> None:
    app = api.client.app
    assert isinstance(app, FastAPI)
    with pytest.raises(RuntimeError, match=r"mark it @pytest\.mark\.runner"):
        app.state.run_manager.submit(1)


@pytest.mark.runner
def test_a_runner_test_commits_and_is_wiped_afterwards(app: FastAPI, api: ApiUser) -> None:
    assert _committed_users(app) == [api.email]


def test_the_runner_tests_rows_were_wiped(app: FastAPI, db: Session) -> None:
    # Runs after the test above (pytest keeps a module's order): its committed user is gone.
    assert _committed_users(app) == []
