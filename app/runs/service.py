"""Runs: persistence. Plan a case's execution, record outcomes, re-score after rating changes.

The pipeline's plain data (plans, fetched queries) lives in app.runs.plan and the
runner itself (fetching and scoring) in app.runs.runner; it is a plain function of a
run id and a session factory, callable in-process or from a worker.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.access import valid_id
from app.cases import queries as query_service
from app.cases import service as case_service
from app.endpoints import results as static_results
from app.endpoints.service import engine_config
from app.errors import Conflict, NotFound
from app.models import Case, Query, Run, RunQuery, Scorer, SearchEndpoint, Try
from app.runs.metrics import metric_ids, recorded, run_metrics
from app.runs.plan import (
    FetchedQuery,
    MetricScores,
    QueryPlan,
    RunPlan,
    RunSetupError,
    score_metrics,
)
from app.runs.schemas import (
    MetricRead,
    RunDetail,
    RunDocRead,
    RunProgress,
    RunQueryRead,
    RunSummary,
    TagRead,
)
from app.scorers.service import config_of
from app.scoring import Outcome, QueryInput, ScorerConfig, score_queries
from app.scoring.types import StoredDocs
from app.vocabulary import ACTIVE_RUN_STATUSES, Engine, QueryStatus, RunStatus

ACTIVE = ACTIVE_RUN_STATUSES
# Results are written with Core inserts on the table: the ORM's bulk path costs twice as
# much for a run's thousand rows.
RUN_QUERIES = cast(Table, RunQuery.__table__)


def create_run(
    *,
    session: Session,
    case: Case,
    try_number: int | None = None,
    explain: bool = False,
    knobs: Mapping[str, float] | None = None,
    sweep_id: int | None = None,
    trigger: str | None = None,
    commit: bool = True,
) -> Run:
    """Queue a run of the case with the given try (default: the current one).

    ``trigger`` says what started it ("api", "schedule"); by default "sweep" for a sweep's
    run and "user" for the rest.

    ``knobs`` override the try's knob values for this run only (a sweep's combination);
    ``commit=False`` leaves the commit to the caller (a sweep queues all its runs at once).
    """
    number = try_number or case.current_try_number
    case_service.get_try(session=session, case=case, number=number)
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
    if commit:
        session.commit()
    else:
        session.flush()
    return run


def load_plan(*, session: Session, run_id: int, query_ids: Sequence[int] | None = None) -> RunPlan:
    """Read the run's case, try, endpoint, scorer and queries into a plain plan.

    With ``query_ids`` (a chunk of a run executed by workers), the plan holds only those
    queries that still exist and carries the run's lease, which all of its chunks share.
    """
    run = _run(session, run_id)
    case = session.get(Case, run.case_id)
    assert case is not None
    chosen = case_service.get_try(session=session, case=case, number=run.try_number)
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
    if endpoint.engine == Engine.STATIC:  # a result file: read now, nothing to fetch
        shared["static_results"] = static_results.results_for(
            session=session,
            endpoint_id=endpoint.id,
            queries=[(q.query_id, q.text) for q in queries],
            rows=chosen.rows,
        )
    return RunPlan(
        run_id=run.id,
        endpoint=engine_config(endpoint),
        template=chosen.query_template,
        field_spec=chosen.field_spec,
        rows=chosen.rows,
        knobs=run.knobs if run.knobs is not None else (chosen.knobs or {}),
        case_options=case.options or {},
        scorer=config_of(scorer),
        queries=queries,
        explain=run.explain,
        owner_id=case.owner_id,
        scorer_id=scorer.id,
        metrics=_metric_configs(session, run),
        **shared,
    )


def _metric_configs(session: Session, run: Run) -> list[tuple[int, ScorerConfig]]:
    """Return the run's extra metric scorers' configs (deleted scorers are left out)."""
    ids = metric_ids(run)[1:]
    if not ids:
        return []
    found = {s.id: s for s in session.scalars(select(Scorer).where(Scorer.id.in_(ids)))}
    return [(i, config_of(found[i])) for i in ids if i in found]


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
    if rows:
        session.execute(insert(RUN_QUERIES), rows)
    done_chunks = sorted({*(run.chunks_done or []), chunk})
    finished = len(done_chunks) >= (run.chunks or 0)
    _refresh_totals(session, run.id)
    count = session.scalar(select(func.count()).where(RunQuery.run_id == run.id)) or 0
    values: dict[str, Any] = {"chunks_done": done_chunks, "done": count}
    values["heartbeat_at"] = datetime.now(UTC)
    if finished:
        values.update(
            status=RunStatus.FINISHED,
            finished_at=datetime.now(UTC),
            recorded_score=Run.case_score,
            recorded_scorer_id=Run.scorer_id,
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
    session.commit()
    session.refresh(run)
    return run


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
    if rows:
        session.execute(insert(RUN_QUERIES), rows)
    _refresh_totals(session, plan.run_id)
    run = session.get(Run, plan.run_id)
    session.execute(
        update(Run)
        .where(Run.id == plan.run_id)
        .values(
            done=len(rows),
            recorded_score=Run.case_score,
            recorded_scorer_id=Run.scorer_id,
            recorded_metrics=None if run is None else _recorded_metrics(session, run),
        )
    )
    session.commit()


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


def _recorded_metrics(session: Session, run: Run) -> list[dict[str, Any]] | None:
    """Return what the run's metrics score as it finishes (None for a run of one metric)."""
    session.flush()
    session.refresh(run)
    if not run.metric_scorer_ids:
        return None
    return recorded(run_metrics(session=session, run=run))


def _refresh_totals(session: Session, run_id: int) -> None:
    # One statement: per status, the count and the mean score (the scored group's is the case's).
    groups = session.execute(
        select(RunQuery.status, func.count(), func.avg(RunQuery.score))
        .where(RunQuery.run_id == run_id)
        .group_by(RunQuery.status)
    ).all()
    counts = {status: count for status, count, _mean in groups}
    mean = next((m for status, _count, m in groups if status == QueryStatus.SCORED), None)
    if _weighted_run(session, run_id):
        mean = session.scalar(_weighted_score(run_id))
    session.execute(
        update(Run)
        .where(Run.id == run_id)
        .values(
            case_score=None if mean is None else float(mean),
            scored=counts.get(QueryStatus.SCORED, 0),
            unscored=counts.get(QueryStatus.UNSCORED, 0),
            errors=counts.get(QueryStatus.ERROR, 0),
        )
    )


def _weighted_run(session: Session, run_id: int) -> bool:
    aggregate = session.scalar(
        select(Case.aggregate).join(Run, Run.case_id == Case.id).where(Run.id == run_id)
    )
    return aggregate == "weighted_mean"


def _weighted_score(run_id: int) -> Any:
    """Return a SELECT of the run's weighted case score, Σ wᵢ·sᵢ / Σ wᵢ over scored queries
    (a deleted query weighs 1)."""
    weight = func.coalesce(Query.weight, 1.0)
    return (
        select(func.sum(RunQuery.score * weight) / func.nullif(func.sum(weight), 0))
        .select_from(RunQuery)
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id == run_id, RunQuery.status == QueryStatus.SCORED)
    )


def latest_finished_run(*, session: Session, case: Case) -> Run | None:
    """Return the case's newest finished run."""
    stmt = (
        select(Run)
        .where(Run.case_id == case.id, Run.status == RunStatus.FINISHED)
        .order_by(Run.id.desc())
        .limit(1)
    )
    return session.scalar(stmt)


def rescore_query(
    *,
    session: Session,
    case: Case,
    query: Query,
    ratings: Mapping[str, float] | None = None,
) -> tuple[Run, RunQuery] | None:
    """Re-score one query of the latest run with its current ratings, without refetching.

    ``ratings`` are the query's current ratings when the caller holds them already.
    """
    latest = latest_with_row(session=session, case=case, query=query)
    if latest.run is None or latest.row is None:
        return None
    if not rescore_row(
        session=session, case=case, query=query, run=latest.run, row=latest.row, ratings=ratings
    ):
        return None
    return latest.run, latest.row


@dataclass(frozen=True)
class LatestRow:
    """The case's latest finished run, the query's row in it and the run's try (each or None)."""

    run: Run | None
    row: RunQuery | None
    chosen: Try | None


def latest_with_row(*, session: Session, case: Case, query: Query) -> LatestRow:
    """Return the latest finished run with the query's row and the run's try, in one statement."""
    latest = (
        select(Run.id)
        .where(Run.case_id == case.id, Run.status == RunStatus.FINISHED)
        .order_by(Run.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    stmt = (
        select(Run, RunQuery, Try)
        .outerjoin(RunQuery, (RunQuery.run_id == Run.id) & (RunQuery.query_id == query.id))
        .outerjoin(Try, (Try.case_id == Run.case_id) & (Try.number == Run.try_number))
        .where(Run.id == latest)
    )
    found = session.execute(stmt).first()
    if found is None:
        return LatestRow(run=None, row=None, chosen=None)
    run, row, chosen = found
    return LatestRow(run=run, row=row, chosen=chosen)


def rescore_row(
    *,
    session: Session,
    case: Case,
    query: Query,
    run: Run,
    row: RunQuery,
    ratings: Mapping[str, float] | None = None,
) -> bool:
    """Re-score the query's row with the run's scorer and refresh the run's totals.

    Returns False (and changes nothing) when there is no ranking or scorer to score.
    """
    # The run's scorer is usually the case's, already loaded: no look-up then.
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if scorer is None or not _has_ranking(row):
        return False
    if ratings is None:
        ratings = query_service.ratings_of(session=session, query_ids=[query.id])[query.id]
    stored = stored_input(row, ratings, query.options or {}, case.options or {})
    outcome = score_queries(config_of(scorer), [stored])[0]
    _apply(row, outcome, ratings)
    metrics = _metric_configs(session, run)
    if metrics:
        row.metric_scores = {
            str(scorer.id): outcome.score if outcome.status == QueryStatus.SCORED else None,
            **score_metrics(metrics, [stored])[0],
        }
    session.flush()
    _refresh_totals_of(session, run, weighted=case.aggregate == "weighted_mean")
    session.commit()
    return True


def _refresh_totals_of(session: Session, run: Run, *, weighted: bool) -> None:
    """Recount the run's totals in one UPDATE and set them on the loaded run (no reload).

    ``weighted``: the case's aggregate is the weighted mean (the caller has the case loaded).
    """

    def of(status: QueryStatus, value: Any) -> Any:
        return (
            select(value)
            .where(RunQuery.run_id == run.id, RunQuery.status == status)
            .scalar_subquery()
        )

    stmt = (
        update(Run)
        .where(Run.id == run.id)
        .values(
            case_score=(
                _weighted_score(run.id).scalar_subquery()
                if weighted
                else of(QueryStatus.SCORED, func.avg(RunQuery.score))
            ),
            scored=of(QueryStatus.SCORED, func.count()),
            unscored=of(QueryStatus.UNSCORED, func.count()),
            errors=of(QueryStatus.ERROR, func.count()),
        )
        .returning(Run.case_score, Run.scored, Run.unscored, Run.errors)
        .execution_options(synchronize_session=False)
    )
    case_score, scored, unscored, errors = session.execute(stmt).one()
    for name, value in (
        ("case_score", None if case_score is None else float(case_score)),
        ("scored", scored),
        ("unscored", unscored),
        ("errors", errors),
    ):
        set_committed_value(run, name, value)


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


def _run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id) if valid_id(run_id) else None
    if run is None:
        raise NotFound(f"No run with id {run_id}.")
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


def rescore_run(*, session: Session, run: Run) -> Run:
    """Re-score every stored ranking of a run with the current ratings, without refetching."""
    case = session.get(Case, run.case_id)
    scorer = session.get(Scorer, run.scorer_id) if run.scorer_id else None
    if case is None or scorer is None:
        raise NotFound("The run's case or scorer no longer exists.")
    rows = [r for r in run_queries(session=session, run=run) if r.query_id is not None]
    fetched = [r for r in rows if _has_ranking(r)]
    options: dict[int, dict[str, Any]] = dict(
        session.execute(select(Query.id, Query.options).where(Query.case_id == case.id)).all()
    )
    ratings = query_service.ratings_of(
        session=session, query_ids=[r.query_id for r in fetched if r.query_id is not None]
    )
    metrics = _metric_configs(session, run)
    made = (
        stored_input(
            r,
            ratings.get(r.query_id or 0, {}),
            options.get(r.query_id or 0) or {},
            case.options or {},
        )
        for r in fetched
    )
    # One metric: a generator, each input scored as soon as it is made; several: the
    # inputs are made once and every metric scores the same list.
    inputs = list(made) if metrics else made
    outcomes = score_queries(config_of(scorer), inputs)
    extra = score_metrics(metrics, list(inputs)) if metrics else None
    for index, (row, outcome) in enumerate(zip(fetched, outcomes, strict=True)):
        _apply(row, outcome, ratings.get(row.query_id or 0, {}))
        if extra is not None:
            primary = outcome.score if outcome.status == QueryStatus.SCORED else None
            row.metric_scores = {str(scorer.id): primary, **extra[index]}
    session.flush()
    _refresh_totals(session, run.id)
    session.commit()
    session.refresh(run)
    return run


def stored_input(
    row: RunQuery,
    ratings: Mapping[str, float],
    query_options: Mapping[str, Any],
    case_options: Mapping[str, Any],
) -> QueryInput:
    """Return the scoring input of a stored ranking with the given (current) ratings."""
    return QueryInput(
        docs=StoredDocs(row.docs).as_sequence(),
        ratings=ratings,
        num_found=row.num_found,
        query_options=query_options,
        case_options=case_options,
        text=row.text,
    )


def _has_ranking(row: RunQuery) -> bool:
    """Return whether the engine answered this query (a fetch error leaves nothing to score)."""
    return not (row.status == QueryStatus.ERROR and row.num_found is None and not row.docs)


def _apply(row: RunQuery, outcome: Outcome, ratings: Mapping[str, float]) -> None:
    row.status, row.score, row.raw_score = outcome.status, outcome.score, outcome.raw_score
    row.reason = outcome.reason if outcome.status == QueryStatus.UNSCORED else None
    row.error = outcome.reason if outcome.status == QueryStatus.ERROR else None
    row.docs = [{**d, "rating": ratings.get(d["id"])} for d in row.docs]
    row.log = list(outcome.log)
