"""Runs whose process went away: queued runs that never reached the job queue are claimed to
be queued again, and active runs whose heartbeat stopped are failed as interrupted.

The process that executes a run writes its heartbeats (app.runs.store); app.runs.manager
calls these every half lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, update
from sqlalchemy.orm import Session

from app.models import Run
from app.vocabulary import ACTIVE_RUN_STATUSES, RunStatus

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
    conditions = [
        Run.status.in_(ACTIVE_RUN_STATUSES),
        func.coalesce(Run.heartbeat_at, Run.created_at) <= stale,
    ]
    if spare:
        conditions.append(Run.id.not_in(list(spare)))
    result = session.execute(
        update(Run)
        .where(*conditions)
        .values(status=RunStatus.FAILED, error=INTERRUPTED, finished_at=datetime.now(UTC))
    )
    session.commit()
    return int(getattr(result, "rowcount", 0) or 0)
