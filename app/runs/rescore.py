"""Runs: re-scoring stored rankings with the current ratings, without refetching.

A rating changed on the case page re-scores that query's row of the latest run; a rescore
of a run (or ratings imported) re-scores every row of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.cases.case_runs import case_run
from app.cases.totals import refresh_totals
from app.errors import NotFound
from app.models import Case, Query, Run, RunQuery, Scorer, Try
from app.runs.metrics import metric_configs
from app.runs.plan import score_with_metrics
from app.runs.scoring_input import stored_inputs
from app.runs.service import run_queries
from app.runs.stored_results import has_ranking
from app.scorers.config import config_of
from app.scoring import Outcome
from app.vocabulary import QueryStatus


def rescore_query(*, session: Session, case: Case, query: Query) -> tuple[Run, RunQuery] | None:
    """Re-score one query of the latest run with its current ratings, without refetching."""
    latest = latest_with_row(session=session, case=case, query=query, lock=True)
    if (
        latest.run is None
        or latest.row is None
        or rescore_row(session=session, case=case, query=query, run=latest.run, row=latest.row)
        is None
    ):
        return None  # the run's lock is let go when the caller's transaction ends
    return latest.run, latest.row


@dataclass(frozen=True)
class LatestRow:
    """The case's latest finished run, the query's row in it and the run's try (each or None)."""

    run: Run | None
    row: RunQuery | None
    chosen: Try | None


def latest_with_row(*, session: Session, case: Case, query: Query, lock: bool = False) -> LatestRow:
    """Return the latest finished run with the query's row and the run's try, in one statement.

    With ``lock``, the run's row is held first, until the transaction ends (see lock_run),
    and the run and row are read after it: what a re-score of the row needs.
    """
    latest = (
        select(Run.id)
        .where(Run.case_id == case.id, case_run())
        .order_by(Run.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    if lock:
        latest = session.scalar(_locking(Run.id == latest).returning(Run.id))
        if latest is None:
            return LatestRow(run=None, row=None, chosen=None)
    stmt = (
        select(Run, RunQuery, Try)
        .outerjoin(RunQuery, (RunQuery.run_id == Run.id) & (RunQuery.query_id == query.id))
        .outerjoin(Try, (Try.case_id == Run.case_id) & (Try.number == Run.try_number))
        .where(Run.id == latest)
        .execution_options(populate_existing=lock)
    )
    found = session.execute(stmt).first()
    if found is None:
        return LatestRow(run=None, row=None, chosen=None)
    run, row, chosen = found
    return LatestRow(run=run, row=row, chosen=chosen)


def rescore_row(
    *, session: Session, case: Case, query: Query, run: Run, row: RunQuery
) -> dict[str, float] | None:
    """Re-score the query's row with its current ratings and refresh the run's totals.

    The caller holds the run's lock (``latest_with_row(lock=True)``). Returns the ratings it
    scored with; None (and changes nothing) when there is no ranking or scorer to score.
    """
    # The run's scorer is usually the case's, already loaded: no look-up then.
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if scorer is None or not has_ranking(row):
        return None
    loaded = stored_inputs(
        session=session, case=case, query_ids=[query.id], query_options={query.id: query.options}
    )
    stored = loaded.input_of(row)
    ratings = dict(loaded.ratings_of(row))
    metrics = metric_configs(session=session, run=run)
    [outcome], [scores] = score_with_metrics(config_of(scorer), metrics, [stored])
    _apply(row, outcome, ratings)
    if metrics:
        row.metric_scores = {
            str(scorer.id): outcome.score if outcome.status == QueryStatus.SCORED else None,
            **scores,
        }
    session.flush()
    refresh_totals(
        session=session, run_id=run.id, weighted=case.aggregate == "weighted_mean", run=run
    )
    session.flush()
    return ratings


def lock_run(*, session: Session, run_id: int) -> bool:
    """Hold the run's row until the transaction ends; False when the run is gone.

    Re-scores of a run's rows take turns on it, each reading the ratings after the previous
    one committed: without it, two ratings of one case given at once were each re-scored
    from the ratings its own request had seen, and the later commit left a stale score.
    """
    return session.execute(_locking(Run.id == run_id).returning(Run.id)).first() is not None


def _locking(where: Any) -> Any:
    # A write rather than SELECT ... FOR UPDATE: SQLite has no row locks, and there the first
    # write of a transaction is what takes the database's lock (reads before it would see
    # data older than the lock).
    return (
        update(Run)
        .where(where)
        .values(case_score=Run.case_score)
        .execution_options(synchronize_session=False)
    )


def rescore_run(*, session: Session, run: Run) -> Run:
    """Re-score every stored ranking of a run with the current ratings, without refetching."""
    case = session.get(Case, run.case_id)
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if case is None or scorer is None or not lock_run(session=session, run_id=run.id):
        raise NotFound("The run's case or scorer no longer exists.")
    rows = [r for r in run_queries(session=session, run=run) if r.query_id is not None]
    fetched = [r for r in rows if has_ranking(r)]
    loaded = stored_inputs(
        session=session,
        case=case,
        query_ids=[r.query_id for r in fetched if r.query_id is not None],
    )
    metrics = metric_configs(session=session, run=run)
    inputs = [loaded.input_of(r) for r in fetched]
    # One pass: the primary and every metric score the same arrays, made once.
    outcomes, extra = score_with_metrics(config_of(scorer), metrics, inputs)
    for index, (row, outcome) in enumerate(zip(fetched, outcomes, strict=True)):
        _apply(row, outcome, loaded.ratings_of(row))
        if metrics:
            primary = outcome.score if outcome.status == QueryStatus.SCORED else None
            row.metric_scores = {str(scorer.id): primary, **extra[index]}
    session.flush()
    refresh_totals(session=session, run_id=run.id)
    session.flush()
    session.refresh(run)
    return run


def _apply(row: RunQuery, outcome: Outcome, ratings: Mapping[str, float]) -> None:
    row.status, row.score, row.raw_score = outcome.status, outcome.score, outcome.raw_score
    row.reason = outcome.reason if outcome.status == QueryStatus.UNSCORED else None
    row.error = outcome.reason if outcome.status == QueryStatus.ERROR else None
    row.docs = [{**d, "rating": ratings.get(d["id"])} for d in row.docs]
    row.log = list(outcome.log)
