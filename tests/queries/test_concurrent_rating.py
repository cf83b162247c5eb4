"""Ratings given at once to different docs of a case leave the scores a fresh re-score gives.

Each request writes its rating, then re-scores, in one transaction. Every request here is
held before its write until all have arrived, so that they all write at once: without the
run's lock, each re-scored with the ratings it had seen (its own), and the last commit won.
(SQLite lets one writer in at a time, so there they take turns from the first write.)
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Rating, Run, RunQuery
from app.queries import service as query_service
from app.runs import rescore as rescoring
from tests.fixtures.users import ApiUser
from tests.support.pages import add_queries, doc, finished_run, movies_case, scorer_id

pytestmark = pytest.mark.runner  # the requests commit for real, each on its own connection

DOCS = 5


def _stored(factory: sessionmaker[Session], run_id: int) -> tuple[float | None, dict[int, Any]]:
    with session_scope(factory) as session:
        run = session.get(Run, run_id)
        assert run is not None
        rows = session.scalars(select(RunQuery).where(RunQuery.run_id == run_id)).all()
        return run.case_score, {r.query_id or 0: r.score for r in rows}


def test_concurrent_ratings_of_one_case_keep_every_update(
    api: ApiUser, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id = movies_case(api, scorer_id=scorer_id(api, "Classic"))
    ids = add_queries(api, case_id, ["star wars", "alien"])
    docs = [doc(str(n), f"Movie {n}", n) for n in range(1, DOCS + 1)]
    run_id = finished_run(
        session_factory,
        case_id,
        {qid: {"status": "unscored", "docs": docs} for qid in ids.values()},
        scorer=scorer_id(api, "Classic"),
    )
    votes = [(qid, str(n), float(n + 1)) for qid in ids.values() for n in range(1, DOCS + 1)]
    # Every request waits here, before its rating is written, until all have arrived.
    arrived = threading.Barrier(len(votes), timeout=30)
    real = query_service.set_ratings_with_raters

    def held(**kwargs: Any) -> Any:
        arrived.wait()
        return real(**kwargs)

    monkeypatch.setattr(query_service, "set_ratings_with_raters", held)

    def rate(vote: tuple[int, str, float]) -> int:
        query_id, doc_id, rating = vote
        url = f"/api/v1/cases/{case_id}/queries/{query_id}/ratings"
        response = api.put(url, json={"ratings": [{"doc_id": doc_id, "rating": rating}]})
        return int(response.status_code)

    with ThreadPoolExecutor(len(votes)) as pool:
        assert list(pool.map(rate, votes)) == [200] * len(votes)

    case_score, scores = _stored(session_factory, run_id)
    # A fresh re-score from the stored ratings changes nothing.
    with session_scope(session_factory) as session:
        run = session.get(Run, run_id)
        case = session.get(Case, case_id)
        assert run is not None and case is not None
        rescoring.rescore_run(session=session, run=run)
        stored = session.scalars(select(Rating.query_id).where(Rating.query_id.in_(ids.values())))
        assert len(list(stored)) == len(votes)
    assert _stored(session_factory, run_id) == (case_score, scores)
    # Classic over ratings 2..6 of the top five: 36 for each query, and for the case.
    assert (case_score, scores) == (36.0, {qid: 36.0 for qid in ids.values()})
