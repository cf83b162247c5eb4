"""Runs: what an executing run reads and writes. Its plan, its chunks and their lease, the
heartbeats, the results and the ending; and the runs whose process went away.

The pipeline's plain data (plans, fetched queries) lives in app.runs.plan and the
runner itself (fetching and scoring) in app.runs.runner, which calls these functions.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, and_, case, delete, func, insert, select, update
from sqlalchemy.exc import DataError, DBAPIError, StatementError
from sqlalchemy.orm import Session

from app.access import valid_id
from app.cases.totals import refresh_totals
from app.cases.tries import get_try
from app.endpoints import results as static_results
from app.endpoints.service import engine_config
from app.errors import NotFound
from app.models import Case, Query, Run, RunQuery, Scorer, SearchEndpoint
from app.runs.metrics import metric_configs, recorded, run_metrics
from app.runs.plan import FetchedQuery, MetricScores, QueryPlan, RunPlan, RunSetupError
from app.scorers.config import config_of
from app.scoring import Outcome
from app.search import adapter_for
from app.vocabulary import ACTIVE_RUN_STATUSES, QueryStatus, RunStatus

ACTIVE = ACTIVE_RUN_STATUSES

# Results are written with Core inserts on the table: the ORM's bulk path costs twice as
# much for a run's thousand rows.
RUN_QUERIES = cast(Table, RunQuery.__table__)


def load_plan(*, session: Session, run_id: int, query_ids: Sequence[int] | None = None) -> RunPlan:
    """Read the run's case, try, endpoint, scorer and queries into a plain plan.

    With ``query_ids`` (a chunk of a run executed by workers), the plan holds only those
    queries that still exist and carries the run's lease, which all of its chunks share.
    """
    run = _run(session, run_id)
    case = session.get(Case, run.case_id)
    assert case is not None
    chosen = get_try(session=session, case=case, number=run.try_number)
    endpoint = session.get(SearchEndpoint, chosen.search_endpoint_id)
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if endpoint is None or scorer is None:
        raise RunSetupError("The case's search endpoint or scorer no longer exists.")
    # Plain rows, not ORM objects: a plan may hold many thousand queries.
    stmt = select(Query.id, Query.text, Query.position, Query.options).where(
        Query.case_id == case.id
    )
    if query_ids is not None:
        stmt = stmt.where(Query.id.in_(list(query_ids)))
    queries = [
        QueryPlan(query_id=qid, text=text, position=position, options=options or {})
        for qid, text, position, options in session.execute(stmt.order_by(Query.position, Query.id))
    ]
    shared: dict[str, Any] = {} if query_ids is None or run.lease is None else {"lease": run.lease}
    if adapter_for(endpoint.engine).answers_from_file:  # read now, nothing to fetch
        shared["static_results"] = static_results.results_for(
            session=session,
            endpoint_id=endpoint.id,
            queries=[(q.query_id, q.text) for q in queries],
            rows=chosen.rows,
        )
    return RunPlan(
        run_id=run.id,
        endpoint=engine_config(endpoint, sandbox_owner=case.owner_id),
        template=run.query_template if run.query_template is not None else chosen.query_template,
        field_spec=chosen.field_spec,
        rows=chosen.rows,
        knobs=run.knobs if run.knobs is not None else (chosen.knobs or {}),
        case_options=case.options or {},
        scorer=config_of(scorer),
        queries=queries,
        explain=run.explain,
        owner_id=case.owner_id,
        scorer_id=scorer.id,
        metrics=metric_configs(session=session, run=run),
        **shared,
    )


def plan_chunks(*, session: Session, run_id: int, chunk_size: int) -> list[list[int]]:
    """Split a queued run's queries into chunks for workers; return each chunk's query ids.

    The run gets the lease that all its chunks share. A case with no queries still gets
    one (empty) chunk, so that the run finishes the same way. No heartbeat is written: until
    a chunk starts, the run counts as never queued, so a process that stops between this
    and putting the chunks in the queue leaves a run that is queued again, not failed.
    """
    run = _run(session, run_id)
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
    rows = _result_rows(plan, fetched, outcomes, ratings, metric_scores)
    _insert_results(session, rows)
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


INTERRUPTED = "Interrupted: the process running it stopped before it finished."


def claim_unqueued_runs(
    *, session: Session, lease_s: float, spare: Sequence[int] = ()
) -> list[int]:
    """Return the queued runs whose chunks never reached the job queue, claimed for queueing.

    A server that stops between creating a run and queueing its chunks (a sweep queues all
    its runs, then their jobs), or between planning the chunks and putting them in the
    queue, leaves a queued run with no job: it lost nothing, so it is queued again rather
    than failed. The claim (a first heartbeat) is made once, by one
    process: a claimed run that is orphaned again is failed as interrupted like any other.
    """
    now = datetime.now(UTC)
    conditions = [
        Run.status == RunStatus.QUEUED,
        Run.heartbeat_at.is_(None),
        Run.created_at <= now - timedelta(seconds=lease_s),
    ]
    if spare:
        conditions.append(Run.id.not_in(list(spare)))
    claimed = session.scalars(
        update(Run)
        .where(*conditions)
        .values(heartbeat_at=now)
        .returning(Run.id)
        .execution_options(synchronize_session=False)
    ).all()
    session.commit()
    return sorted(claimed)


def fail_interrupted_runs(*, session: Session, lease_s: float, spare: Sequence[int] = ()) -> int:
    """Mark as failed the active runs whose process is gone; return how many.

    A run is gone when its heartbeat (or, never started, its creation) is older than the
    lease: runs that another live process is executing are left alone, and so are the
    ``spare`` runs (those with chunks still waiting in the job queue).
    """
    stale = datetime.now(UTC) - timedelta(seconds=lease_s)
    conditions = [Run.status.in_(ACTIVE), func.coalesce(Run.heartbeat_at, Run.created_at) <= stale]
    if spare:
        conditions.append(Run.id.not_in(list(spare)))
    result = session.execute(
        update(Run)
        .where(*conditions)
        .values(status=RunStatus.FAILED, error=INTERRUPTED, finished_at=datetime.now(UTC))
    )
    session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


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
    rows = _result_rows(plan, fetched, outcomes, ratings, metric_scores)
    _insert_results(session, rows)
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


UNSTORABLE = "The engine's answer for this query could not be stored ({reason})."


def _insert_results(session: Session, rows: list[dict[str, Any]]) -> None:
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


def _result_rows(
    plan: RunPlan,
    fetched: Sequence[FetchedQuery],
    outcomes: Sequence[Outcome],
    ratings: Mapping[int, Mapping[str, float]],
    metric_scores: Sequence[MetricScores] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    scores: Sequence[MetricScores | None] = (
        metric_scores if metric_scores is not None else [None] * len(fetched)
    )
    for f, outcome, metric in zip(fetched, outcomes, scores, strict=True):
        query_ratings = ratings.get(f.plan.query_id, {})
        docs = [{**d, "rating": query_ratings.get(d["id"])} for d in f.docs or []]
        rows.append(
            {
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
        )
    return rows


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


def _run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id) if valid_id(run_id) else None
    if run is None:
        raise NotFound(f"No run with id {run_id}.")
    return run
