"""What the domains above runs have runs do for them: at a run's end, and every minute.

A schedule starts runs and its alert rules read them, so schedules sit above runs and runs
do not name them. At start-up the app (app/main.py) and the worker command (app/cli)
register schedules' work here; the runner calls ``run_ended`` as each run ends and the
job queue's periodic task calls ``minute``. Registering a name again replaces its work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

__all__ = ["MinuteWork", "RunEndedWork", "minute", "on_minute", "on_run_ended", "run_ended"]


class RunEndedWork(Protocol):
    """Work when a run has ended; it must not raise or wait on the network."""

    async def __call__(self, *, session_factory: sessionmaker[Session], run_id: int) -> None: ...


class MinuteWork(Protocol):
    """Work once a minute; ``start`` is given each run it queues."""

    async def __call__(
        self, *, session_factory: sessionmaker[Session], start: Callable[[int], object]
    ) -> object: ...


log = logging.getLogger(__name__)
_run_ended: dict[str, RunEndedWork] = {}
_minute: dict[str, MinuteWork] = {}


def on_run_ended(name: str, work: RunEndedWork) -> None:
    """Have ``work`` done whenever a run ends, in whichever process ends it."""
    _run_ended[name] = work


def on_minute(name: str, work: MinuteWork) -> None:
    """Have ``work`` done by the job queue's periodic task, once a minute."""
    _minute[name] = work


async def run_ended(*, session_factory: sessionmaker[Session], run_id: int) -> None:
    """Do the registered work of a run that has ended."""
    for work in list(_run_ended.values()):
        await work(session_factory=session_factory, run_id=run_id)


async def minute(*, session_factory: sessionmaker[Session], start: Callable[[int], object]) -> None:
    """Do the registered once-a-minute work; one that raises is logged, the rest goes on."""
    for name, work in list(_minute.items()):
        try:
            await work(session_factory=session_factory, start=start)
        except Exception:  # the queue's task still defers the runs started and resumes others
            log.exception("the minute's %s work failed", name)
