"""The sweeps' work in the job kernel: closing the sweeps whose runs have all ended."""

from __future__ import annotations

import asyncio

from app.db import session_scope
from app.runs.events import REAPED, Reaped
from app.sweeps.service import close_finished_sweeps

__all__ = ["close_finished", "register"]


def _close(event: Reaped) -> None:
    with session_scope(event.session_factory) as session:
        close_finished_sweeps(session=session)


async def close_finished(event: Reaped) -> None:
    """Close the sweeps whose runs have all ended (on workers, in no process's care)."""
    await asyncio.to_thread(_close, event)


def register() -> None:
    """Close finished sweeps after every round of looking after the queue's runs."""
    REAPED.add("sweeps", close_finished)
