"""Runs: their lifecycle. Create, read, list and cancel a case's runs.

Executing a run is app.runs.runner's; what it reads is app.runs.inputs' (its plan), what it
writes as it goes (chunks, leases, the ending) app.runs.store's and app.runs.query_rows'
(each query's row); re-scoring stored rankings after ratings change is
app.runs.rescore's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.access import valid_id
from app.cases.case_runs import case_run
from app.cases.tries import get_try
from app.errors import Conflict, NotFound
from app.models import Case, Query, Run, RunQuery
from app.runs.metrics import run_metrics
from app.runs.schemas import (
    MetricRead,
    RunDetail,
    RunDocRead,
    RunProgress,
    RunQueryRead,
    RunSummary,
    TagRead,
)
from app.vocabulary import ACTIVE_RUN_STATUSES, QueryStatus, RunStatus

ACTIVE = ACTIVE_RUN_STATUSES


def create_run(
    *,
    session: Session,
    case: Case,
    try_number: int | None = None,
    explain: bool = False,
    knobs: Mapping[str, float] | None = None,
    sweep_id: int | None = None,
    trigger: str | None = None,
) -> Run:
    """Queue a run of the case with the given try (default: the current one).

    ``trigger`` says what started it ("api", "schedule"); by default "sweep" for a sweep's
    run and "user" for the rest.

    ``knobs`` override the try's knob values for this run only (a sweep's combination).
    """
    number = try_number or case.current_try_number
    get_try(session=session, case=case, number=number)
    total = session.scalar(select(func.count()).select_from(Query).where(Query.case_id == case.id))
    run = Run(
        case_id=case.id,
        try_number=number,
        scorer_id=case.scorer_id,
        status=RunStatus.QUEUED,
        explain=explain,
        total=total or 0,
        knobs=None if knobs is None else dict(knobs),
        sweep_id=sweep_id,
        metric_scorer_ids=list(case.metric_scorer_ids or []),
    )
    if trigger is not None:
        run.trigger = trigger
    session.add(run)
    session.flush()
    return run


def status_of(*, session: Session, run_id: int) -> RunStatus | None:
    """Return a run's status, or None when it is gone (deleted with its case)."""
    return session.scalar(select(Run.status).where(Run.id == run_id))


def mark_failed(*, session: Session, run_id: int, message: str) -> None:
    """Record a whole-run failure (a run that already ended keeps its ending)."""
    session.execute(
        update(Run)
        .where(Run.id == run_id, Run.status.in_(ACTIVE))
        .values(status=RunStatus.FAILED, error=message, finished_at=datetime.now(UTC))
    )
    session.commit()


def cancel_run(*, session: Session, run: Run) -> Run:
    """Cancel a queued or running run; its executing process stops at its next heartbeat."""
    result = session.execute(
        update(Run)
        .where(Run.id == run.id, Run.status.in_(ACTIVE))
        .values(status=RunStatus.CANCELLED, error="Cancelled.", finished_at=datetime.now(UTC))
    )
    if not getattr(result, "rowcount", 0):
        session.rollback()
        session.refresh(run)
        raise Conflict(
            f"Run {run.id} has already ended ({run.status}): there is nothing to cancel."
        )
    session.flush()
    session.refresh(run)
    return run


def latest_finished_run(*, session: Session, case: Case) -> Run | None:
    """Return the case's newest run with results: finished, or failed with every query errored."""
    stmt = select(Run).where(Run.case_id == case.id, case_run()).order_by(Run.id.desc()).limit(1)
    return session.scalar(stmt)


def list_runs(*, session: Session, case: Case, limit: int = 200) -> list[Run]:
    """Return the case's runs, newest first."""
    stmt = select(Run).where(Run.case_id == case.id).order_by(Run.id.desc()).limit(limit)
    return list(session.scalars(stmt))


def get_run(*, session: Session, case: Case, run_id: int) -> Run:
    """Return a run of this case, or 404."""
    run = session.get(Run, run_id) if valid_id(run_id) else None
    if run is None or run.case_id != case.id:
        raise NotFound(f"Case {case.id} has no run {run_id}.")
    return run


def finished_run(*, session: Session, run_id: int) -> Run:
    """Return a run that was just awaited, or 404 when its case was deleted meanwhile."""
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound(f"Run {run_id} is gone: its case was deleted while it ran.")
    return run


def run_queries(*, session: Session, run: Run) -> list[RunQuery]:
    """Return the run's per-query outcomes in query position order."""
    stmt = (
        select(RunQuery).where(RunQuery.run_id == run.id).order_by(RunQuery.position, RunQuery.id)
    )
    return list(session.scalars(stmt))


def summary(run: Run) -> RunSummary:
    """Return the list view of a run."""
    return RunSummary.model_validate(run)


def detail(*, session: Session, run: Run) -> RunDetail:
    """Return a run with every query's outcome and ranked docs."""
    queries = [
        RunQueryRead(
            query_id=row.query_id,
            text=row.text,
            status=row.status,
            score=row.score,
            raw_score=row.raw_score,
            reason=row.reason,
            error=row.error,
            num_found=row.num_found,
            duration_ms=row.duration_ms,
            docs=[RunDocRead.model_validate(d) for d in row.docs],
            metric_scores=_row_scores(run, row),
        )
        for row in run_queries(session=session, run=run)
    ]
    base = summary(run).model_dump()
    return RunDetail(
        **base,
        progress=RunProgress(done=run.done, total=run.total),
        queries=queries,
        metrics=metrics_read(session=session, run=run),
    )


def metrics_read(*, session: Session, run: Run, tag: str | None = None) -> list[MetricRead]:
    """Return the API view of every metric of the run (the primary first)."""
    return [
        MetricRead(
            scorer_id=m.scorer_id,
            name=m.name,
            case_score=m.case_score,
            scored=m.scored,
            by_tag=[TagRead(tag=t.tag, count=t.count, mean=t.mean, min=t.min) for t in m.by_tag],
        )
        for m in run_metrics(session=session, run=run, tag=tag)
    ]


def _row_scores(run: Run, row: RunQuery) -> dict[str, float | None]:
    scores = dict(row.metric_scores or {})
    if run.scorer_id is not None:
        scores[str(run.scorer_id)] = row.score if row.status == QueryStatus.SCORED else None
    return scores
