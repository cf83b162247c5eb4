"""Rating documents: one service for the API's PUT ratings and the page's rating buttons.

It validates against the case's scorer, writes, re-scores the query in the latest run
without refetching, and hands back what both callers show (no second look-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.models import Case, Query, Run, RunQuery, User
from app.schemas.cases import RatingIn
from app.services import queries as query_service
from app.services import runs as run_service
from app.services.stored import latest_row

__all__ = ["Rated", "rate"]


@dataclass(frozen=True)
class Rated:
    """The query's ratings after the change, and its re-scored row in the latest run."""

    ratings: dict[str, float]
    run: Run | None
    row: RunQuery | None
    rescored: bool


def rate(
    *, session: Session, case: Case, query: Query, user: User, ratings: Sequence[RatingIn]
) -> Rated:
    """Upsert ratings (null clears) within the case scorer's scale and re-score the query."""
    current = query_service.set_ratings(
        session=session, query=query, scorer=case.scorer, ratings=ratings, user=user
    )
    rescored = run_service.rescore_query(session=session, case=case, query=query)
    if rescored is None:
        # Nothing to re-score (no run yet, or the engine failed this query): show it as it is.
        run = run_service.latest_finished_run(session=session, case=case)
        row = latest_row(session=session, run=run, query=query)
        return Rated(ratings=current, run=run, row=row, rescored=False)
    run, row = rescored
    return Rated(ratings=current, run=run, row=row, rescored=True)
