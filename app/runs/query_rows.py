"""Runs: what a run stores per query. One row of results for each query the run fetched and
scored, and, for a row the database refuses, that query's error in its place.

When the rows are written (a chunk's, or a whole run's as it finishes) is app.runs.store's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.exc import DataError, DBAPIError, StatementError
from sqlalchemy.orm import Session

from app.models import RunQuery
from app.runs.plan import FetchedQuery, MetricScores, RunPlan
from app.scoring import Outcome
from app.vocabulary import QueryStatus

# Results are written with Core inserts on the table: the ORM's bulk path costs twice as
# much for a run's thousand rows.
RUN_QUERIES = cast(Table, RunQuery.__table__)

UNSTORABLE = "The engine's answer for this query could not be stored ({reason})."


def result_rows(
    plan: RunPlan,
    fetched: Sequence[FetchedQuery],
    outcomes: Sequence[Outcome],
    ratings: Mapping[int, Mapping[str, float]],
    metric_scores: Sequence[MetricScores] | None = None,
) -> list[dict[str, Any]]:
    """Return the rows of the run's queries: what each fetched, how it scored, its ratings."""
    scores: Sequence[MetricScores | None] = (
        metric_scores if metric_scores is not None else [None] * len(fetched)
    )
    return [
        _row(plan, f, outcome, ratings.get(f.plan.query_id, {}), metric)
        for f, outcome, metric in zip(fetched, outcomes, scores, strict=True)
    ]


def insert_results(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert a run's result rows; a row the database refuses becomes that query's error.

    The docs are cleaned where answers become docs (app.search.storable); this is the last
    line: one hostile answer must not lose the other queries' results, nor fail the run.
    """
    if not rows:
        return
    try:
        with session.begin_nested():
            session.execute(insert(RUN_QUERIES), rows)
        return
    except (StatementError, OverflowError) as exc:
        if _not_the_data(exc):
            raise
    for row in rows:  # one at a time, to find the ones refused
        _insert_one(session, row)


def _row(
    plan: RunPlan,
    f: FetchedQuery,
    outcome: Outcome,
    query_ratings: Mapping[str, float],
    metric: MetricScores | None,
) -> dict[str, Any]:
    docs = [{**d, "rating": query_ratings.get(d["id"])} for d in f.docs or []]
    return {
        "run_id": plan.run_id,
        "query_id": f.plan.query_id,
        "text": f.plan.text,
        "position": f.plan.position,
        "status": outcome.status,
        "score": outcome.score,
        "raw_score": outcome.raw_score,
        "reason": outcome.reason if outcome.status == QueryStatus.UNSCORED else None,
        "error": outcome.reason if outcome.status == QueryStatus.ERROR else None,
        "num_found": f.num_found,
        "duration_ms": round(f.duration_ms, 2),
        "docs": docs,
        "log": list(outcome.log),
        "metric_scores": metric,
    }


def _insert_one(session: Session, row: dict[str, Any]) -> None:
    # The row as it is, or, refused for its data, its query's error instead.
    try:
        with session.begin_nested():
            session.execute(insert(RUN_QUERIES), [row])
    except (StatementError, OverflowError) as exc:
        if _not_the_data(exc):
            raise
        cause = getattr(exc, "orig", None) or exc
        with session.begin_nested():
            session.execute(insert(RUN_QUERIES), [_refused(row, type(cause).__name__)])


def _not_the_data(exc: Exception) -> bool:
    # A value the database or its driver refuses (DataError; SQLite's driver raises
    # OverflowError for an integer beyond 64 bits) is the row's fault; a lost connection,
    # a lock or a deadlock is not, and fails the chunk as before.
    return isinstance(exc, DBAPIError) and not isinstance(exc, DataError)


def _refused(row: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        **row,
        "status": QueryStatus.ERROR,
        "score": None,
        "raw_score": None,
        "reason": None,
        "error": UNSTORABLE.format(reason=reason),
        "num_found": None,
        "docs": [],
        "log": [],
        "metric_scores": {key: None for key in row["metric_scores"] or {}} or None,
    }
