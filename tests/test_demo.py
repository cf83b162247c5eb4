"""The demo setup: created once, rated, run, and reused on the next start."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.demo.setup import (
    CASE_NAME,
    DEMO_EMAIL,
    DEMO_PASSWORD,
    ENDPOINT_NAME,
    JUDGEMENTS,
    prepare_demo,
)
from app.models import Case, Query, Rating, Run, SearchEndpoint, User
from app.services import users as user_service

# The runner executes in threads with their own connections: its rows must be committed.
pytestmark = pytest.mark.runner


def test_demo_is_created_once_rated_and_run(
    session_factory: sessionmaker[Session], movies_engine: Any, client: Any
) -> None:
    first = prepare_demo(session_factory=session_factory, engine_url=movies_engine.url)
    second = prepare_demo(session_factory=session_factory, engine_url=movies_engine.url + "/")
    assert first.created and not second.created
    assert first.case_id == second.case_id
    with session_factory() as session:
        assert (
            session.scalar(select(func.count()).select_from(Case).where(Case.name == CASE_NAME))
            == 1
        )
        assert (
            user_service.authenticate(session=session, email=DEMO_EMAIL, password=DEMO_PASSWORD)
            is not None
        )
        assert session.scalar(select(func.count()).select_from(User)) == 1
        queries = session.scalars(select(Query).where(Query.case_id == first.case_id)).all()
        assert len(queries) == len(JUDGEMENTS) >= 20
        by_text = {q.text: q for q in queries}
        star_wars = dict(
            session.execute(
                select(Rating.doc_id, Rating.rating).where(
                    Rating.query_id == by_text["star wars"].id
                )
            ).all()
        )
        # Seven Star Wars films are Perfect; everything else the engine showed is Poor.
        assert sorted(star_wars.values()).count(3.0) == 7
        assert 0.0 in star_wars.values()
        runs = session.scalars(select(Run).where(Run.case_id == first.case_id)).all()
        assert len(runs) == 1
        assert runs[0].status == "finished"
        assert runs[0].case_score is not None and 0 < runs[0].case_score <= 100
        assert runs[0].errors == 0
        # A demo started on another engine port points the same endpoint at that engine.
        moved = prepare_demo(session_factory=session_factory, engine_url="http://127.0.0.1:9251")
        assert moved.case_id == first.case_id and not moved.created
        session.expire_all()
        endpoint = session.scalar(
            select(SearchEndpoint).where(SearchEndpoint.name == ENDPOINT_NAME)
        )
        assert endpoint is not None and endpoint.url == "http://127.0.0.1:9251/movies"
        assert session.scalar(select(func.count()).select_from(SearchEndpoint)) == 1
