"""Runs as jobs in the job queue (``app.jobs``), for any number of workers.

A queued run is split into chunks of queries (``Settings.run_chunk_size``); each chunk is
one job, so several workers execute one run at once, and each chunk's results are
committed as it finishes (``store.store_chunk``). A worker that dies mid-chunk stops
sending its heartbeat; its chunks are then put back in the queue (``retry_stalled``) and
executed again by another worker, which replaces whatever the first one committed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.jobs.queue import JobQueue
from app.jobs.registry import Resource
from app.runs import store as run_store

__all__ = ["CHUNK_ATTEMPTS", "CHUNK_TASK", "START_RUN", "RunQueue", "StartRun"]

CHUNK_TASK = "relevo.run_chunk"
# A chunk stopped by its worker's shutdown goes back to the queue; a chunk whose own work
# failed has already failed its run and is not retried.
CHUNK_ATTEMPTS = 20

# How a process that does jobs starts a queued run (its chunks queued, or executed here).
StartRun = Callable[[int], Awaitable[object]]
START_RUN: Resource[StartRun] = Resource("start a run")


class RunQueue:
    """Puts runs in the job queue and looks after them: stalled chunks, runs still queued."""

    def __init__(
        self,
        *,
        database_url: str,
        session_factory: sessionmaker[Session],
        chunk_size: int = 100,
        jobs: JobQueue | None = None,
    ) -> None:
        self.jobs = jobs if jobs is not None else JobQueue(database_url)
        self._session_factory = session_factory
        self._chunk_size = chunk_size

    async def open(self) -> None:
        """Open the queue's connection pool."""
        await self.jobs.open()

    async def close(self) -> None:
        """Close the queue's connection pool."""
        await self.jobs.close()

    def _plan(self, run_id: int) -> list[list[int]]:
        with session_scope(self._session_factory) as session:
            return run_store.plan_chunks(
                session=session, run_id=run_id, chunk_size=self._chunk_size
            )

    async def enqueue(self, run_id: int) -> int:
        """Split a queued run into chunk jobs; return how many."""
        chunks = await asyncio.to_thread(self._plan, run_id)
        jobs = [
            {"run_id": run_id, "chunk": number, "query_ids": ids}
            for number, ids in enumerate(chunks)
        ]
        await self.jobs.defer_many(CHUNK_TASK, jobs)
        return len(jobs)

    async def drop_queued(self, run_id: int) -> None:
        """Remove a run's chunks that no worker has started (after a cancel)."""
        await self.jobs.drop_todo(CHUNK_TASK, key="run_id", value=run_id)

    async def live_run_ids(self) -> list[int]:
        """Return the runs that still have chunks queued or being executed."""
        return await self.jobs.live(CHUNK_TASK, key="run_id")

    async def retry_stalled(self, stalled_s: float) -> int:
        """Put back in the queue the chunks of workers silent for ``stalled_s``; return how many."""
        return await self.jobs.retry_stalled(CHUNK_TASK, stalled_s)
