"""Rating documents: one service for the API's PUT ratings and the page's rating buttons.

It validates against the case's scorer, writes, re-scores the query in the latest run
without refetching, and hands back what both callers show (no second look-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.models import Case, Query, Run, RunQuery, Try, User
from app.queries import service as query_service
from app.queries.schemas import RatingIn
from app.runs import rescore as rescoring

__all__ = ["Rated", "rate"]


@dataclass(frozen=True)
class Rated:
    """The query's ratings after the change (with their raters' emails), and its re-scored
    row in the latest run (with the run's try, for showing the docs)."""

    ratings: dict[str, float]
    run: Run | None
    row: RunQuery | None
    rescored: bool
    raters: dict[str, str | None]
    chosen: Try | None


def rate(
    *, session: Session, case: Case, query: Query, user: User, ratings: Sequence[RatingIn]
) -> Rated:
    """Upsert ratings (null clears) within the case scorer's scale and re-score the query."""
    current, raters = query_service.set_ratings_with_raters(
        session=session, query=query, scorer=case.scorer, ratings=ratings, user=user
    )
    # The run is locked before the ratings are read for its re-score: concurrent ratings of
    # the case take turns there, each scoring with every rating committed before it.
    latest = rescoring.latest_with_row(session=session, case=case, query=query, lock=True)
    scored = None
    if latest.run is not None and latest.row is not None:
        scored = rescoring.rescore_row(
            session=session, case=case, query=query, run=latest.run, row=latest.row
        )
    # The run's lock is let go when the request's transaction ends (committed or not).
    # Without a run, or when the engine failed this query, it is shown as it is. Re-scored,
    # it shows the ratings it was scored with (others' given meanwhile included).
    return Rated(
        ratings=current if scored is None else scored,
        run=latest.run,
        row=latest.row,
        rescored=scored is not None,
        raters=raters,
        chosen=latest.chosen,
    )
