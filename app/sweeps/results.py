"""Reading a sweep: each combination's run as a result, and the best of them.

A partial run (a query errored or was not run) averages fewer queries than the others, so
it is never the best, however high its score; unrated queries, left unscored by every run
alike, make no run partial (README, "Partial runs").
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Case, Run, RunQuery, Sweep
from app.runs.metrics import metric_defs, run_metrics
from app.runs.schemas import RecordedMetric
from app.sweeps.schemas import SweepRead, SweepResult
from app.vocabulary import ACTIVE_RUN_STATUSES, QueryStatus, RunStatus, is_partial

__all__ = ["is_complete", "read_sweep"]


def _runs(session: Session, sweep: Sweep) -> list[Run]:
    stmt = select(Run).where(Run.sweep_id == sweep.id).order_by(Run.id)
    return list(session.scalars(stmt))


def is_complete(run: Run) -> bool:
    """Return whether a run counts as complete: finished, with a score, and no query errored
    or left out (README, "Partial runs"); unrated queries, left out by every run alike, do
    not make it partial."""
    return (
        run.status == RunStatus.FINISHED
        and run.scored > 0
        and not is_partial(run.scored, run.total, run.errors, run.unscored)
    )


def _result(session: Session, case: Case | None, run: Run) -> SweepResult:
    # Every column re-scored like case_score (today's ratings, weights and aggregate), as the
    # case page shows them; a run still going has nothing to show yet.
    ended = run.status not in ACTIVE_RUN_STATUSES
    summaries = run_metrics(session=session, run=run, case=case) if ended else []
    return SweepResult(
        knobs=run.knobs or {},
        run_id=run.id,
        status=run.status,
        case_score=run.case_score,
        scored=run.scored,
        unscored=run.unscored,
        errors=run.errors,
        total=run.total,
        complete=is_complete(run),
        metrics=[
            RecordedMetric(
                scorer_id=m.scorer_id, name=m.name, case_score=m.case_score, scored=m.scored
            )
            for m in summaries
            if m.scorer_id != run.scorer_id
        ],
    )


def _scored_alike(session: Session, results: list[SweepResult]) -> tuple[list[SweepResult], int]:
    """Return the finished runs without errors that left out only the queries every such run
    left out (unrated ones, say), and how many those are; ([], 0) when there are none."""
    candidates = {
        r.run_id: r
        for r in results
        if r.status == RunStatus.FINISHED and not r.errors and r.case_score is not None
    }
    if not candidates:
        return [], 0
    rows = session.execute(
        select(RunQuery.run_id, RunQuery.query_id).where(
            RunQuery.run_id.in_(list(candidates)), RunQuery.status == QueryStatus.UNSCORED
        )
    ).all()
    left_out: dict[int, set[int | None]] = {run_id: set() for run_id in candidates}
    for run_id, query_id in rows:
        left_out[run_id].add(query_id)
    always = set.intersection(*left_out.values())
    if not always:
        return [], 0
    return [r for run_id, r in candidates.items() if left_out[run_id] == always], len(always)


def _no_best_note(results: list[SweepResult]) -> str | None:
    """Say why no run is the best, once some have finished."""
    ended = [r for r in results if r.status == RunStatus.FINISHED]
    if not ended:
        return None
    if all(r.case_score is None for r in ended):
        return "No complete run: no combination scored any query (are the queries rated?)."
    if all(r.errors for r in ended):
        return "No complete run: every combination had errors (engine or scorer)."
    return "No complete run: every combination left queries unscored or with errors."


def _primary_name(session: Session, scorer_id: int | None) -> str | None:
    """Return the name of the runs' primary metric, the metric of their case_score."""
    if scorer_id is None:
        return None
    found = metric_defs(session=session, ids=[scorer_id])
    return found[0].name if found else None


def read_sweep(*, session: Session, sweep: Sweep) -> SweepRead:
    """Return the sweep with each combination's run and the best complete one.

    A partial run (errors or unscored queries) averages fewer queries than the others, so
    it is never the best, however high its score. Except where some queries are unscored in
    every run (unrated ones, say): then no run can be complete, and the best is chosen among
    the runs without errors that left out those queries and no other, which all average the
    same queries (``best_note`` says so).
    """
    case = session.get(Case, sweep.case_id)
    runs = _runs(session, sweep)
    primary = case.scorer_id if case is not None else None
    results = [_result(session, case, run) for run in runs]
    ranked = [r for r in results if r.complete and r.case_score is not None]
    note = None
    if not ranked:
        ranked, always = _scored_alike(session, results)
        if ranked:
            note = (
                f"No run scored every query: {always} "
                f"{'query was' if always == 1 else 'queries were'} unscored in every run "
                "(no ratings, or none relevant). Best among the runs without errors that "
                "scored all the others."
            )
    best = max(ranked, key=lambda r: r.case_score or 0.0, default=None)
    return SweepRead(
        id=sweep.id,
        case_id=sweep.case_id,
        status=sweep.status,
        try_number=sweep.try_number,
        grid=sweep.grid,
        total=sweep.total,
        done=sum(r.status not in ACTIVE_RUN_STATUSES for r in results),
        results=results,
        best=best,
        best_note=note if best is not None else _no_best_note(results),
        metric=_primary_name(session, runs[0].scorer_id if runs else primary),
        aggregate=case.aggregate if case is not None else "mean",
        created_at=sweep.created_at,
        finished_at=sweep.finished_at,
    )
