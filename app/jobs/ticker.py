"""The minute without a queue (SQLite): the web app calls the ``MINUTE`` hook itself."""

from __future__ import annotations

import asyncio
import logging

from app.jobs.registry import MINUTE, Job

__all__ = ["Ticker"]

log = logging.getLogger(__name__)


class Ticker:
    """Calls the ``MINUTE`` hook every ``every_s`` in this event loop, given ``job``."""

    def __init__(self, *, job: Job, every_s: float = 15.0) -> None:
        self._job = job
        self._every = every_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start ticking (the first tick at once: a time missed while down is done now)."""

        async def forever() -> None:
            while True:
                await MINUTE(self._job)  # each work's failure is its own, logged
                await asyncio.sleep(self._every)

        self._task = asyncio.create_task(forever())

    async def aclose(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
