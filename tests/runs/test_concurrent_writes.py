"""Two requests writing the same new row at once both succeed (on SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Query, Rating, Scorer, User
from app.queries import service as queries
from app.queries.schemas import RatingIn
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint


def _case(api: ApiUser) -> tuple[int, int]:
    endpoint = make_endpoint(api, "http://127.0.0.1:9200/movies")
    case = make_case(api, endpoint["id"])
    ids = add_queries(api, case["id"], ["star wars"])
    return int(case["id"]), ids["star wars"]


def _stale_once(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the first read of ``name`` miss a row another request has just written."""
    real = getattr(queries, name)
    calls = [0]

    def stale(**kwargs: Any) -> Any:
        calls[0] += 1
        return [] if calls[0] == 1 else real(**kwargs)

    monkeypatch.setattr(queries, name, stale)


def test_concurrent_first_ratings_of_a_doc(
    api: ApiUser, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    _case_id, query_id = _case(api)
    with session_scope(session_factory) as other:
        other.add(Rating(query_id=query_id, doc_id="913", rating=1.0, rated_by_id=api.id))
        other.commit()
    _stale_once(monkeypatch, "list_ratings")
    with session_scope(session_factory) as session:
        query = session.get(Query, query_id)
        user = session.get(User, api.id)
        scorer = (
            session.query(Scorer).filter_by(name="P@10").first() or session.query(Scorer).first()
        )
        assert query is not None and user is not None and scorer is not None
        ratings = [RatingIn(doc_id="913", rating=0.0)]
        queries.set_ratings(session=session, query=query, scorer=scorer, ratings=ratings, user=user)
    with session_scope(session_factory) as session:
        rows = session.query(Rating).filter_by(query_id=query_id).all()
        assert [(r.doc_id, r.rating) for r in rows] == [("913", 0.0)]


def test_concurrent_adds_of_the_same_query(
    api: ApiUser, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id, query_id = _case(api)
    _stale_once(monkeypatch, "list_queries")
    with session_scope(session_factory) as session:
        case = session.get(Case, case_id)
        assert case is not None
        added = queries.add_queries(session=session, case=case, texts=["star wars", "alien"])
        assert [q.text for q in added] == ["star wars", "alien"]
        assert added[0].id == query_id
