"""Score history per query: its stored score in each finished run of the case."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.case_runs import has_results
from app.cases.history_schemas import QueryHistory, QueryHistoryPoint, QueryScorePoint
from app.models import Case, Query, Run, RunQuery
from app.runs.metrics import metric_defs
from app.runs.stored_results import effective_knobs
from app.vocabulary import QueryStatus

__all__ = ["SPARKLINE_RUNS", "query_history", "score_histories"]

SPARKLINE_RUNS = 20


def _finished_runs(session: Session, case_id: int, limit: int | None) -> list[Run]:
    stmt = select(Run).where(Run.case_id == case_id, has_results()).order_by(Run.id.desc())
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(reversed(session.scalars(stmt).all()))


def score_histories(
    *, session: Session, case_id: int, query_ids: Sequence[int], runs: int = SPARKLINE_RUNS
) -> dict[int, list[QueryScorePoint]]:
    """Return each query's scores in the case's last finished runs, oldest first (one query)."""
    if not query_ids:
        return {}
    run_ids = [run.id for run in _finished_runs(session, case_id, runs)]
    if not run_ids:
        return {qid: [] for qid in query_ids}
    stmt = select(RunQuery.query_id, RunQuery.run_id, RunQuery.status, RunQuery.score).where(
        RunQuery.run_id.in_(run_ids), RunQuery.query_id.in_(query_ids)
    )
    found = {
        (qid, run_id): (score if status == QueryStatus.SCORED else None)
        for qid, run_id, status, score in session.execute(stmt)
    }
    return {
        qid: [
            QueryScorePoint(run_id=run_id, score=found[(qid, run_id)])
            for run_id in run_ids
            if (qid, run_id) in found
        ]
        for qid in query_ids
    }


def query_history(
    *, session: Session, case: Case, query: Query, metric: int | None = None
) -> QueryHistory:
    """Return the query's stored score in every finished run of its case, oldest first.

    ``metric`` (a scorer id among the case's metrics) shows that metric's stored score of the
    query instead of the primary's; an unknown one falls back to the primary.
    """
    runs = _finished_runs(session, case.id, None)
    metrics = {
        m.scorer_id: m.name
        for m in metric_defs(session=session, ids=[case.scorer_id, *(case.metric_scorer_ids or [])])
    }
    if metric not in metrics or metric == case.scorer_id:
        metric = None
    stmt = select(RunQuery.run_id, RunQuery.status, RunQuery.score, RunQuery.metric_scores).where(
        RunQuery.query_id == query.id, RunQuery.run_id.in_([r.id for r in runs])
    )
    rows = {
        run_id: (status, score if metric is None else (scores or {}).get(str(metric)))
        for run_id, status, score, scores in session.execute(stmt)
    }
    knobs = effective_knobs(session=session, case_id=case.id, runs=runs)
    points = []
    for run in runs:
        status, score = rows.get(run.id, (None, None))
        points.append(
            QueryHistoryPoint(
                run_id=run.id,
                try_number=run.try_number,
                finished_at=run.finished_at,
                knobs=knobs[run.id],
                status=status,
                # An extra metric scores what the primary scored (a null where it did not).
                score=score if status == QueryStatus.SCORED or metric is not None else None,
            )
        )
    return QueryHistory(
        case_id=case.id,
        query_id=query.id,
        text=query.text,
        metric=metric,
        metric_names=metrics,
        points=points,
    )
