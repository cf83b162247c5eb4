"""Runs: what an executing run writes. Its chunks and their lease, the heartbeats, the
results and the ending.

What it reads first (its plan) is app.runs.inputs'; the rows it stores per query are
app.runs.query_rows'; the runs whose process went away are app.runs.orphans'. The
pipeline's plain data (plans, fetched queries) lives in app.runs.plan and the runner itself
(fetching and scoring) in app.runs.runner, which calls these functions.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, case, delete, func, select, update
from sqlalchemy.orm import Session

from app.cases.totals import refresh_totals
from app.models import Case, Query, Run, RunQuery
from app.runs.inputs import find_run
from app.runs.metrics import recorded, run_metrics
from app.runs.plan import FetchedQuery, MetricScores, RunPlan
from app.runs.query_rows import insert_results, result_rows
from app.scoring import Outcome
from app.vocabulary import ACTIVE_RUN_STATUSES, RunStatus

ACTIVE = ACTIVE_RUN_STATUSES


def plan_chunks(*, session: Session, run_id: int, chunk_size: int) -> list[list[int]]:
    """Split a queued run's queries into chunks for workers; return each chunk's query ids.

    The run gets the lease that all its chunks share. A case with no queries still gets
    one (empty) chunk, so that the run finishes the same way. No heartbeat is written: until
    a chunk starts, the run counts as never queued, so a process that stops between this
    and putting the chunks in the queue leaves a run that is queued again, not failed.
    """
    run = find_run(session=session, run_id=run_id)
    ids = list(
        session.scalars(
            select(Query.id).where(Query.case_id == run.case_id).order_by(Query.position, Query.id)
        )
    )
    chunks = [ids[i : i + chunk_size] for i in range(0, len(ids), chunk_size)] or [[]]
    session.execute(
        update(Run)
        .where(Run.id == run_id, Run.status == RunStatus.QUEUED)
        .values(
            lease=uuid.uuid4().hex,
            total=len(ids),
            done=0,
            chunks=len(chunks),
            chunks_done=[],
        )
    )
    session.commit()
    return chunks


def start_chunk(*, session: Session, plan: RunPlan) -> bool:
    """Record that one of the run's chunks started; False when the run has ended."""
    now = datetime.now(UTC)
    result = session.execute(
        update(Run)
        .where(Run.id == plan.run_id, Run.lease == plan.lease, Run.status.in_(ACTIVE))
        .values(
            status=RunStatus.RUNNING,
            started_at=func.coalesce(Run.started_at, now),
            heartbeat_at=now,
        )
    )
    session.commit()
    return bool(getattr(result, "rowcount", 0))


def touch_run(*, session: Session, plan: RunPlan) -> RunStatus | None:
    """Record that a chunk of the run is alive; return the run's status (None: not ours)."""
    session.execute(
        update(Run)
        .where(Run.id == plan.run_id, Run.lease == plan.lease, Run.status.in_(ACTIVE))
        .values(heartbeat_at=datetime.now(UTC))
    )
    status = run_status(session=session, plan=plan)
    session.commit()
    return status


def store_chunk(
    *,
    session: Session,
    plan: RunPlan,
    chunk: int,
    query_ids: Sequence[int],
    fetched: Sequence[FetchedQuery],
    outcomes: Sequence[Outcome],
    ratings: Mapping[int, Mapping[str, float]],
    metric_scores: Sequence[MetricScores] | None = None,
) -> bool:
    """Commit one chunk's results; the last chunk finishes the run. Return whether it did.

    Writing a chunk twice (a retried job whose first attempt had committed) replaces its
    results, so every query of the run ends with exactly one. Chunks of one run commit one
    at a time (the run's row is locked), so totals and the ending are always right.
    """
    run = session.scalar(
        select(Run)
        .where(Run.id == plan.run_id, Run.lease == plan.lease, Run.status == RunStatus.RUNNING)
        .with_for_update()
    )
    if run is None:  # cancelled, failed or deleted meanwhile: the chunk's work is dropped
        session.rollback()
        return False
    if query_ids:
        session.execute(
            delete(RunQuery).where(RunQuery.run_id == run.id, RunQuery.query_id.in_(query_ids))
        )
    rows = result_rows(plan, fetched, outcomes, ratings, metric_scores)
    insert_results(session, rows)
    done_chunks = sorted({*(run.chunks_done or []), chunk})
    finished = len(done_chunks) >= (run.chunks or 0)
    refresh_totals(session=session, run_id=run.id)
    count = session.scalar(select(func.count()).where(RunQuery.run_id == run.id)) or 0
    values: dict[str, Any] = {"chunks_done": done_chunks, "done": count}
    values["heartbeat_at"] = datetime.now(UTC)
    if finished:
        values.update(
            **_ending(count),
            finished_at=datetime.now(UTC),
            recorded_score=Run.case_score,
            recorded_scorer_id=Run.scorer_id,
            recorded_aggregate=_case_aggregate(),
            recorded_metrics=_recorded_metrics(session, run),
        )
    session.execute(update(Run).where(Run.id == run.id).values(**values))
    session.commit()
    return finished


def mark_running(*, session: Session, plan: RunPlan) -> None:
    """Record that the run started under this execution's lease (unless it ended meanwhile)."""
    now = datetime.now(UTC)
    session.execute(
        update(Run)
        .where(Run.id == plan.run_id, Run.status.in_(ACTIVE))
        .values(
            status=RunStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            lease=plan.lease,
            total=len(plan.queries),
            done=0,
        )
    )
    session.commit()


def record_progress(*, session: Session, plan: RunPlan, done: int) -> RunStatus | None:
    """Record how many queries have come back and that the run is alive; return its status.

    The status tells the executing process whether someone cancelled the run meanwhile;
    None means the run is no longer this execution's (deleted, or leased by another).
    """
    session.execute(
        update(Run)
        .where(Run.id == plan.run_id, Run.lease == plan.lease, Run.status.in_(ACTIVE))
        .values(done=done, heartbeat_at=datetime.now(UTC))
    )
    status = run_status(session=session, plan=plan)
    session.commit()
    return status


def run_status(*, session: Session, plan: RunPlan) -> RunStatus | None:
    """Return the run's status while it is this execution's, else None."""
    row = session.execute(select(Run.status, Run.lease).where(Run.id == plan.run_id)).first()
    return row[0] if row is not None and row[1] == plan.lease else None


def finish_run(
    *,
    session: Session,
    plan: RunPlan,
    fetched: Sequence[FetchedQuery],
    outcomes: Sequence[Outcome],
    ratings: Mapping[int, Mapping[str, float]],
    metric_scores: Sequence[MetricScores] | None = None,
) -> None:
    """Store every query's outcome and the case score, and mark the run finished.

    A run cancelled (or interrupted) meanwhile keeps that ending and stores nothing.
    """
    ended = session.execute(
        update(Run)
        .where(Run.id == plan.run_id, Run.lease == plan.lease, Run.status == RunStatus.RUNNING)
        .values(status=RunStatus.FINISHED, finished_at=datetime.now(UTC))
    )
    if not getattr(ended, "rowcount", 0):
        session.rollback()
        return
    rows = result_rows(plan, fetched, outcomes, ratings, metric_scores)
    insert_results(session, rows)
    refresh_totals(session=session, run_id=plan.run_id)
    run = session.get(Run, plan.run_id)
    session.execute(
        update(Run)
        .where(Run.id == plan.run_id)
        .values(
            **_ending(len(rows)),
            done=len(rows),
            recorded_score=Run.case_score,
            recorded_scorer_id=Run.scorer_id,
            recorded_aggregate=_case_aggregate(),
            recorded_metrics=None if run is None else _recorded_metrics(session, run),
        )
    )
    session.commit()


EVERY_QUERY_ERRORED = "Every query errored: the run has no score."


def _ending(count: int) -> dict[str, Any]:
    # Read after the totals were recounted in this transaction: a run whose every query
    # errored ends "failed" (API.md), with no score, so a run_failed alert can rely on it.
    failed = and_(Run.errors > 0, Run.errors >= count)
    return {
        "status": case((failed, RunStatus.FAILED), else_=RunStatus.FINISHED),
        "error": case((failed, EVERY_QUERY_ERRORED), else_=Run.error),
    }


def _case_aggregate() -> Any:
    """Return the run's case's aggregate, correlated on the updated run: the mean its
    totals were just recounted with (refresh_totals), recorded with them."""
    return select(Case.aggregate).where(Case.id == Run.case_id).scalar_subquery()


def _recorded_metrics(session: Session, run: Run) -> list[dict[str, Any]] | None:
    """Return what the run's metrics score as it finishes (None for a run of one metric)."""
    session.flush()
    session.refresh(run)
    if not run.metric_scorer_ids:
        return None
    return recorded(run_metrics(session=session, run=run))
