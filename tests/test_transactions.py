"""Services own their transactions: a service that refuses leaves nothing behind, so page
handlers never roll back after one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, func, select
from sqlalchemy.orm import Session

from app.db import owns_transaction
from app.errors import Invalid

ROOT = Path(__file__).resolve().parent.parent
metadata = MetaData()
things = Table("things", metadata, Column("id", Integer, primary_key=True), Column("name", String))


@owns_transaction
def add_then_refuse(*, session: Session, name: str) -> None:
    session.execute(things.insert().values(name=name))
    session.flush()
    raise Invalid("name", f"{name} is not allowed")


@owns_transaction
def add(*, session: Session, name: str) -> int:
    session.execute(things.insert().values(name=name))
    session.commit()
    return int(session.scalar(select(func.count()).select_from(things)) or 0)


def test_a_refusing_service_leaves_nothing_written() -> None:
    engine = create_engine("sqlite://")
    metadata.create_all(engine)
    with Session(engine) as session:
        with pytest.raises(Invalid):
            add_then_refuse(session=session, name="bad")
        # The same session goes on, clean: the refused row is gone, not pending.
        assert session.scalar(select(func.count()).select_from(things)) == 0
        assert add(session=session, name="good") == 1
    with Session(engine) as fresh:
        assert fresh.scalars(select(things.c.name)).all() == ["good"]


def test_page_handlers_never_roll_back() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "app" / "web").glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\.rollback\(", line)
    ]
    assert offenders == []
