"""What schedules and alerts do as a run ends and as time passes (see ``tasks.py``).

``run_ended`` is done when a run of any case ends (in whichever process ends it): it
evaluates the case's alert rules in a thread and hands any deliveries to a background task;
it never raises and never waits on the network, so the run is never held up or failed by an
alert. ``fire_and_deliver`` is done every minute: it fires the due schedules and delivers
what is due.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, sessionmaker

from app.cases import case_runs
from app.db import session_scope
from app.models import Alert, AlertCheck, AlertEvent, Run
from app.schedules import delivery
from app.schedules.evaluate import ENDED, evaluate_run
from app.schedules.service import Fired, fire_due

__all__ = [
    "evaluate_ended",
    "evaluate_missed",
    "fire_and_deliver",
    "run_ended",
]

log = logging.getLogger(__name__)
_background: set[asyncio.Task[None]] = set()
# The runner's hook evaluates a run as it ends; a tick looks for the runs it missed among
# those that ended between a day and a minute ago (the minute leaves the hook its turn).
MISSED_WITHIN = timedelta(days=1)
MISSED_AFTER = timedelta(minutes=1)


def evaluate_ended(*, session_factory: sessionmaker[Session], run_id: int) -> list[int]:
    """Evaluate the alert rules on an ended run; return the ids of the events it triggered."""
    config = delivery.current_config()
    with session_scope(session_factory) as session:
        count = evaluate_run(
            session=session,
            run_id=run_id,
            base_url=config.base_url,
            email_enabled=config.email_enabled,
        )
        if not count:
            return []
        return list(session.scalars(select(AlertEvent.id).where(AlertEvent.run_id == run_id)))


async def run_ended(*, session_factory: sessionmaker[Session], run_id: int) -> None:
    """Evaluate alerts on a run that ended and start delivering what triggered (never raises)."""
    try:
        events = await asyncio.to_thread(
            evaluate_ended, session_factory=session_factory, run_id=run_id
        )
    except Exception:
        log.exception("could not evaluate the alerts of run %s", run_id)
        return
    if events:
        task = asyncio.create_task(_drain(session_factory, events))
        _background.add(task)
        task.add_done_callback(_background.discard)


async def _drain(session_factory: sessionmaker[Session], events: list[int]) -> None:
    try:
        await delivery.drain(session_factory=session_factory, event_ids=events)
    except Exception:
        log.exception("delivering alert events %s stopped; the next tick goes on", events)


async def fire_and_deliver(
    *,
    session_factory: sessionmaker[Session],
    start: Callable[[int], object],
    now: datetime | None = None,
) -> list[Fired]:
    """Fire the due schedules (``start`` each run queued) and deliver what is due."""

    def fire() -> list[Fired]:
        with session_scope(session_factory) as session:
            return fire_due(session=session, now=now or datetime.now(UTC))

    fired = await asyncio.to_thread(fire)
    for one in fired:
        if one.run_id is not None:
            start(one.run_id)
    # Alerts come after the runs this tick started, and neither step may stop the other
    # (nor the caller's own work after this: the queue's minute job resumes judge runs).
    try:
        await asyncio.to_thread(evaluate_missed, session_factory=session_factory)
    except Exception:
        log.exception("could not evaluate the alerts of runs that ended unseen")
    try:
        await delivery.deliver_due(session_factory=session_factory)
    except Exception:
        log.exception("could not deliver the alerts due; the next tick tries again")
    return fired


def evaluate_missed(
    *, session_factory: sessionmaker[Session], now: datetime | None = None
) -> list[int]:
    """Evaluate the alerts of runs that ended without the runner's hook seeing it (a run that
    could not start, one failed as interrupted, a process that stopped); return their ids."""
    moment = now or datetime.now(UTC)
    with session_scope(session_factory) as session:
        run_ids = list(
            session.scalars(
                select(Run.id)
                .where(
                    Run.status.in_(ENDED),
                    case_runs.of_case(),  # a sweep's runs and drafts are never evaluated
                    Run.finished_at >= moment - MISSED_WITHIN,
                    Run.finished_at <= moment - MISSED_AFTER,
                    # A rule judges only the runs that ended once it existed.
                    exists().where(
                        Alert.case_id == Run.case_id, Alert.created_at <= Run.finished_at
                    ),
                    ~exists().where(AlertCheck.run_id == Run.id),
                )
                .order_by(Run.id)
                .limit(50)
            )
        )
    for run_id in run_ids:
        evaluate_ended(session_factory=session_factory, run_id=run_id)
    return run_ids
