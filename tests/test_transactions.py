"""One transaction per request: a request that answers 4xx or 5xx has changed nothing, and
work that another connection must see starts only once it is committed."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import after_commit, session_scope
from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint

ROOT = Path(__file__).resolve().parent.parent
URL = "http://127.0.0.1:9/movies"
metadata = MetaData()
things = Table("things", metadata, Column("id", Integer, primary_key=True), Column("name", String))


def test_a_refused_change_keeps_nothing_of_the_request(api: ApiUser) -> None:
    case = make_case(api, make_endpoint(api, URL)["id"], name="Before")
    path = f"/api/v1/cases/{case['id']}"
    refused = api.patch(
        path, json={"name": "After", "schedule": {"cron": "@daily", "try_number": 99}}
    )
    assert refused.status_code == 404
    assert refused.json()["detail"] == f"Case {case['id']} has no try 99."
    # The rename came first in the request, and went with the refusal.
    assert api.get(path).json()["name"] == "Before"
    assert api.patch(path, json={"name": "After"}).json()["name"] == "After"
    assert api.get(path).json()["name"] == "After"


def _factory() -> sessionmaker[Session]:
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    return sessionmaker(bind=engine, expire_on_commit=False)


def test_after_commit_work_runs_once_the_transaction_committed() -> None:
    factory = _factory()
    seen: list[int] = []

    def count_committed() -> None:
        with factory() as other:
            seen.append(int(other.scalar(select(func.count()).select_from(things)) or 0))

    with session_scope(factory) as session:
        session.execute(things.insert().values(name="a"))
        after_commit(session, count_committed)
        assert seen == []
    assert seen == [1]  # it ran after the commit, and saw the row from another session


def test_after_commit_work_is_dropped_with_a_rollback() -> None:
    factory = _factory()
    ran: list[str] = []
    with factory() as session:
        session.execute(things.insert().values(name="a"))
        after_commit(session, lambda: ran.append("rolled back"))
        session.rollback()
        session.execute(things.insert().values(name="b"))
        session.commit()
    with factory() as session:
        after_commit(session, lambda: ran.append("closed"))
    assert ran == []
    with factory() as session:
        assert session.scalars(select(things.c.name)).all() == ["b"]


def test_after_commit_work_waits_for_the_transaction_not_a_savepoint() -> None:
    factory = _factory()
    ran: list[str] = []
    with session_scope(factory) as session:
        after_commit(session, lambda: ran.append("committed"))
        with session.begin_nested():
            session.execute(things.insert().values(name="a"))
        assert ran == []  # the savepoint's release is not the commit
    assert ran == ["committed"]
