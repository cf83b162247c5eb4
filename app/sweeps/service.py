"""Knob sweeps: validate a grid, run every combination as an ordinary run, pick the best.

A sweep never changes the case: each combination is a run of the case's current try with
knob overrides recorded on the run (``Run.knobs``). Only ``apply`` writes the case's knobs.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from app.access import valid_id
from app.cases import service as case_service
from app.cases.schemas import CaseUpdate
from app.db import after_commit
from app.errors import Conflict, Invalid, NotFound
from app.models import Case, Run, RunQuery, Sweep, User
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.runs.manager import RunManager
from app.runs.runner import in_thread
from app.search.templates import extract_knobs
from app.sweeps.results import is_complete, read_sweep
from app.sweeps.schemas import (
    MAX_COMBINATIONS,
    SweepCreate,
    SweepRead,
    SweepStarted,
)
from app.vocabulary import ACTIVE_RUN_STATUSES, RunStatus

__all__ = [
    "apply_sweep",
    "cancel_sweep",
    "close_finished_sweeps",
    "combinations",
    "create_sweep",
    "execute_sweep",
    "fail_interrupted_sweeps",
    "get_sweep",
    "queue_sweep",
    "run_in_background",
    "start_sweep",
    "sweep_run",
]

StartRun = Callable[[int], Awaitable[None]]


def create_sweep(*, session: Session, case: Case, body: SweepCreate) -> Sweep:
    """Check the grid against the current try's template and queue the sweep."""
    chosen = case_service.current_try(session=session, case=case)
    known = extract_knobs(chosen.query_template)
    for name in body.knobs:
        if name not in known:
            listed = ", ".join(known) or "none"
            raise Invalid(
                ("knobs", name),
                f"The query template has no knob {name!r} (its knobs: {listed}).",
            )
    grid = {name: list(dict.fromkeys(values)) for name, values in body.knobs.items()}
    total = math.prod(len(values) for values in grid.values())
    if total > MAX_COMBINATIONS:
        raise Invalid(
            "knobs",
            f"The grid has {total} combinations; a sweep runs at most {MAX_COMBINATIONS}.",
        )
    sweep = Sweep(
        case_id=case.id,
        try_number=chosen.number,
        status=RunStatus.QUEUED,
        grid=grid,
        base_knobs=dict(chosen.knobs or {}),
        total=total,
    )
    session.add(sweep)
    session.flush()
    return sweep


def start_sweep(
    *, session: Session, case: Case, body: SweepCreate, manager: RunManager, wait: bool = False
) -> SweepRead | SweepStarted:
    """Create the sweep and start it; with ``wait``, return it read once it has ended."""
    sweep = create_sweep(session=session, case=case, body=body)
    sweep_id = sweep.id
    if not wait:  # it starts once the request has committed it: its runs read it elsewhere
        after_commit(session, lambda: run_in_background(manager=manager, sweep_id=sweep_id))
        return SweepStarted(id=sweep.id, status=sweep.status)
    # Waiting for it: the request's one transaction ends here, before the sweep starts.
    session.commit()
    run_in_background(manager=manager, sweep_id=sweep_id).result()
    session.expunge_all()
    return read_sweep(
        session=session, sweep=get_sweep(session=session, case=case, sweep_id=sweep_id)
    )


def run_in_background(*, manager: RunManager, sweep_id: int) -> Future[None]:
    """Run the sweep in the run manager's loop; return a future that ends with it.

    With the job queue, every combination is queued at once and spreads over the workers;
    in-process, they run one after another.
    """
    factory = manager.session_factory
    execute = queue_sweep if manager.queue is not None else execute_sweep
    return manager.spawn(
        lambda: execute(session_factory=factory, sweep_id=sweep_id, start_run=manager.run)
    )


def combinations(sweep: Sweep) -> list[dict[str, float]]:
    """Return every combination's full knob values, in grid order."""
    names = list(sweep.grid)
    return [
        {**sweep.base_knobs, **dict(zip(names, values, strict=True))}
        for values in itertools.product(*(sweep.grid[name] for name in names))
    ]


def get_sweep(*, session: Session, case: Case, sweep_id: int) -> Sweep:
    """Return a sweep of this case, or 404."""
    sweep = session.get(Sweep, sweep_id) if valid_id(sweep_id) else None
    if sweep is None or sweep.case_id != case.id:
        raise NotFound(f"Case {case.id} has no sweep {sweep_id}.")
    return sweep


def cancel_sweep(*, session: Session, sweep: Sweep) -> Sweep:
    """Stop a sweep and its run under way; an ended sweep is left as it is."""
    now = datetime.now(UTC)
    ended = session.execute(
        update(Sweep)
        .where(Sweep.id == sweep.id, Sweep.status.in_(ACTIVE_RUN_STATUSES))
        .values(status=RunStatus.CANCELLED, finished_at=now)
    )
    if getattr(ended, "rowcount", 0):
        session.execute(
            update(Run)
            .where(Run.sweep_id == sweep.id, Run.status.in_(ACTIVE_RUN_STATUSES))
            .values(status=RunStatus.CANCELLED, error="Cancelled with its sweep.", finished_at=now)
        )
    session.flush()
    session.refresh(sweep)
    return sweep


def sweep_run(*, session: Session, sweep: Sweep, run_id: int) -> Run:
    """Return one combination's run of the sweep, or 404."""
    run = session.get(Run, run_id) if valid_id(run_id) else None
    if run is None or run.sweep_id != sweep.id:
        raise NotFound(f"Sweep {sweep.id} has no run {run_id}.")
    return run


def apply_sweep(
    *,
    session: Session,
    user: User,
    case: Case,
    sweep: Sweep,
    run_id: int,
    confirm_partial: bool = False,
) -> Case:
    """Set the case's knobs to one combination of the sweep (a new try); a partial run's
    knobs only with `confirm_partial`, so that they are never applied by accident."""
    run = sweep_run(session=session, sweep=sweep, run_id=run_id)
    if run.status != RunStatus.FINISHED:
        raise Conflict(f"Run {run_id} is {run.status}: only a finished run can be applied.")
    if not is_complete(run) and not confirm_partial:
        raise Conflict(
            f"Run {run_id} is partial: its score is the mean over {run.scored} of {run.total} "
            f"queries ({run.errors} errors, {run.unscored} unscored). "
            "Send confirm_partial: true to apply it anyway."
        )
    case = case_service.apply_settings(
        session=session, user=user, case=case, body=CaseUpdate(knobs=run.knobs or {})
    )
    adopt_run(session=session, case=case, run=run)
    return case


def adopt_run(*, session: Session, case: Case, run: Run) -> Run:
    """Make the applied combination's results the case's latest run: a copy of the run
    under the case's current try (``trigger: "apply"``), re-scored with today's ratings,
    scorer and metrics.

    Without it the case kept showing the sweep's last combination (its newest run), whose
    score and results were not those of the knobs just applied. No engine call is made.
    """
    copy = Run(
        case_id=case.id,
        try_number=case.current_try_number,
        scorer_id=case.scorer_id,
        status=RunStatus.FINISHED,
        total=run.total,
        done=run.done,
        started_at=run.started_at,
        finished_at=run.finished_at,
        recorded_score=run.recorded_score,
        recorded_scorer_id=run.recorded_scorer_id,
        recorded_aggregate=run.recorded_aggregate,
        recorded_metrics=run.recorded_metrics,
        metric_scorer_ids=list(case.metric_scorer_ids or []),
        trigger="apply",
    )
    session.add(copy)
    session.flush()
    columns = [c.key for c in RunQuery.__table__.columns if c.key not in ("id", "run_id")]
    for row in run_service.run_queries(session=session, run=run):
        session.add(RunQuery(run_id=copy.id, **{k: getattr(row, k) for k in columns}))
    session.flush()
    return rescoring.rescore_run(session=session, run=copy)


def _next_run(*, session: Session, sweep_id: int, knobs: dict[str, float]) -> int | None:
    """Queue the sweep's next run, or return None when the sweep was cancelled or deleted."""
    sweep = session.get(Sweep, sweep_id)
    case = session.get(Case, sweep.case_id) if sweep is not None else None
    if sweep is None or case is None or sweep.status not in ACTIVE_RUN_STATUSES:
        return None
    if sweep.status == RunStatus.QUEUED and not _mark_running(session, sweep_id):
        return None  # cancelled since it was read: a plain write would undo the cancel
    run = run_service.create_run(
        session=session, case=case, try_number=sweep.try_number, knobs=knobs, sweep_id=sweep.id
    )
    return run.id


def _finish(*, session: Session, sweep_id: int, error: str | None) -> None:
    session.execute(
        update(Sweep)
        .where(Sweep.id == sweep_id, Sweep.status.in_(ACTIVE_RUN_STATUSES))
        .values(
            status=RunStatus.FAILED if error else RunStatus.FINISHED,
            error=error,
            finished_at=datetime.now(UTC),
        )
    )
    session.commit()


def fail_interrupted_sweeps(*, session: Session) -> int:
    """Mark sweeps left queued or running by a stop or crash as failed; return how many."""
    result = session.execute(
        update(Sweep)
        .where(Sweep.status.in_(ACTIVE_RUN_STATUSES))
        .values(
            status=RunStatus.FAILED,
            error="Interrupted: the server stopped during the sweep.",
            finished_at=datetime.now(UTC),
        )
    )
    session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


def close_finished_sweeps(*, session: Session) -> int:
    """Mark finished the active sweeps whose runs have all ended; return how many.

    With the job queue a sweep's runs execute on workers, in no process's care: whichever
    process sees the last one end (the one that queued them, or any reaper) closes it.
    """
    active_runs = (
        select(Run.id).where(Run.sweep_id == Sweep.id, Run.status.in_(ACTIVE_RUN_STATUSES)).exists()
    )
    any_run = select(Run.id).where(Run.sweep_id == Sweep.id).exists()
    result = session.execute(
        update(Sweep)
        .where(Sweep.status.in_(ACTIVE_RUN_STATUSES), any_run, ~active_runs)
        .values(status=RunStatus.FINISHED, finished_at=datetime.now(UTC))
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


def _queue_all(*, session: Session, sweep_id: int) -> list[int]:
    """Create every combination's run at once (one commit); return their ids."""
    sweep = session.get(Sweep, sweep_id)
    case = session.get(Case, sweep.case_id) if sweep is not None else None
    if sweep is None or case is None or sweep.status not in ACTIVE_RUN_STATUSES:
        return []
    runs = [
        run_service.create_run(
            session=session,
            case=case,
            try_number=sweep.try_number,
            knobs=knobs,
            sweep_id=sweep.id,
        )
        for knobs in combinations(sweep)
    ]
    if not _mark_running(session, sweep_id):
        return []  # cancelled meanwhile: its runs are not queued
    session.commit()
    return [run.id for run in runs]


def _mark_running(session: Session, sweep_id: int) -> bool:
    """Mark an active sweep running, unless it was cancelled meanwhile (then roll back and
    return False): only a conditional write cannot overwrite a cancel made since the read."""
    result = session.execute(
        update(Sweep)
        .where(Sweep.id == sweep_id, Sweep.status.in_(ACTIVE_RUN_STATUSES))
        .values(status=RunStatus.RUNNING)
    )
    if getattr(result, "rowcount", 0):
        return True
    session.rollback()
    return False


async def queue_sweep(
    *, session_factory: sessionmaker[Session], sweep_id: int, start_run: StartRun
) -> None:
    """Queue every combination's run for the workers at once; return when all have ended.

    The sweep does not depend on this process: if it stops, the workers go on and a
    reaper closes the sweep when its last run ends.
    """
    db = session_factory
    try:
        run_ids = await in_thread(db, _queue_all, sweep_id=sweep_id)
        await asyncio.gather(*(start_run(run_id) for run_id in run_ids))
    except asyncio.CancelledError:
        raise  # the runs are the queue's; the sweep is closed by whoever sees them end
    except Exception as exc:  # a sweep that breaks is a failed sweep, never a crash
        await in_thread(db, _finish, sweep_id=sweep_id, error=f"Sweep failed: {exc}")
        return
    await in_thread(db, close_finished_sweeps)


def _plan(*, session: Session, sweep_id: int) -> list[dict[str, float]]:
    sweep = session.get(Sweep, sweep_id)
    return [] if sweep is None else combinations(sweep)


async def execute_sweep(
    *, session_factory: sessionmaker[Session], sweep_id: int, start_run: StartRun
) -> None:
    """Run every combination one after another through the normal run path."""
    db = session_factory
    try:
        for knobs in await in_thread(db, _plan, sweep_id=sweep_id):
            run_id = await in_thread(db, _next_run, sweep_id=sweep_id, knobs=knobs)
            if run_id is None:
                return
            await start_run(run_id)
    except asyncio.CancelledError:
        await in_thread(db, _finish, sweep_id=sweep_id, error="The server stopped.")
        raise
    except Exception as exc:  # a sweep that breaks is a failed sweep, never a crash
        await in_thread(db, _finish, sweep_id=sweep_id, error=f"Sweep failed: {exc}")
        return
    await in_thread(db, _finish, sweep_id=sweep_id, error=None)
