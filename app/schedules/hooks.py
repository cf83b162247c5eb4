"""What the rest of Relevo calls: a run has ended; time has passed.

``register`` has the runs domain call ``run_ended`` when a run of any case ends (in
whichever process ends it) and ``fire_and_deliver`` from the job queue's minute task.
``run_ended`` It evaluates the case's alert rules in a thread and hands any deliveries to a
background task: it never raises and never waits on the network, so the run is never held
up or failed by an alert. ``Ticker`` is the loop a server runs when it fires schedules
itself (SQLite): each tick fires the due schedules and delivers what is due.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Alert, AlertCheck, AlertEvent, Run
from app.runs import hooks as run_hooks
from app.runs import stored
from app.schedules import delivery
from app.schedules.evaluate import ENDED, evaluate_run
from app.schedules.service import Fired, fire_due

__all__ = [
    "Ticker",
    "evaluate_ended",
    "evaluate_missed",
    "fire_and_deliver",
    "register",
    "run_ended",
]

log = logging.getLogger(__name__)
_background: set[asyncio.Task[None]] = set()
# The runner's hook evaluates a run as it ends; a tick looks for the runs it missed among
# those that ended between a day and a minute ago (the minute leaves the hook its turn).
MISSED_WITHIN = timedelta(days=1)
MISSED_AFTER = timedelta(minutes=1)


def register() -> None:
    """Have runs evaluate alerts as each run ends, and fire schedules on the queue's minute."""
    run_hooks.on_run_ended("alerts", run_ended)
    run_hooks.on_minute("schedules", fire_and_deliver)


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
                    stored.of_case(),  # a sweep's runs are never evaluated (evaluate_run)
                    Run.finished_at >= moment - MISSED_WITHIN,
                    Run.finished_at <= moment - MISSED_AFTER,
                    Run.case_id.in_(select(Alert.case_id)),
                    ~exists().where(AlertCheck.run_id == Run.id),
                )
                .order_by(Run.id)
                .limit(50)
            )
        )
    for run_id in run_ids:
        evaluate_ended(session_factory=session_factory, run_id=run_id)
    return run_ids


class Ticker:
    """Fires due schedules and delivers due alerts every ``every_s`` in this event loop."""

    def __init__(
        self,
        *,
        session_factory: Callable[[], sessionmaker[Session]],
        start: Callable[[int], object],
        every_s: float = 15.0,
        also: Callable[[], object] | None = None,
    ) -> None:
        """``also`` runs on every tick too (the app resumes judge runs left by a stopped
        process with it)."""
        self._factory = session_factory
        self._start = start
        self._every = every_s
        self._also = also
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start ticking (the first tick at once: a time missed while down runs now)."""

        async def forever() -> None:
            while True:
                try:
                    await fire_and_deliver(session_factory=self._factory(), start=self._start)
                    if self._also is not None:
                        self._also()
                except Exception:  # the database may be briefly away; try again next tick
                    log.exception("could not fire schedules")
                await asyncio.sleep(self._every)

        self._task = asyncio.create_task(forever())

    async def aclose(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
