"""What runs tell the domains above them, through the job kernel's hooks.

A schedule starts runs and its alert rules read them, and a sweep closes when its runs have
ended, so those domains sit above runs and runs do not name them: they add their work to
these hooks from their ``tasks.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from app.jobs.hooks import Hook

__all__ = ["REAPED", "RUN_ENDED", "Reaped", "RunEnded"]


@dataclass(frozen=True)
class RunEnded:
    """A run has ended, in this process (its work must not wait on the network)."""

    session_factory: sessionmaker[Session]
    run_id: int


@dataclass(frozen=True)
class Reaped:
    """A round of looking after the queue's runs is over (runs that end on workers)."""

    session_factory: sessionmaker[Session]


RUN_ENDED: Hook[RunEnded] = Hook("run ended")
REAPED: Hook[Reaped] = Hook("runs reaped")
