"""Where a judge run executes: a job for workers (PostgreSQL queue) or this process (SQLite).

Like case runs: with a job queue the web tier only puts the run in it; without one the
run's coroutine runs in the run manager's event loop, with its own HTTP client.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.judges.client import JudgeClient
from app.judges.runner import execute_judge_run
from app.search.transport import engine_http_client

__all__ = ["launch", "run_in_process"]


async def run_in_process(*, session_factory: sessionmaker[Session], run_id: int) -> None:
    """Execute one judge run here, with a client of its own."""
    async with engine_http_client() as http:
        await execute_judge_run(
            session_factory=session_factory, run_id=run_id, client=JudgeClient(http)
        )


def launch(
    *, manager: Any, session_factory: sessionmaker[Session], run_id: int
) -> concurrent.futures.Future[None]:
    """Start a queued judge run from a request thread (queue it, or run it in-process)."""
    queue = manager.queue
    if queue is not None:

        async def enqueue() -> None:
            await queue.enqueue_judge_run(run_id)

        future: concurrent.futures.Future[None] = manager.spawn(enqueue)
        return future

    async def work() -> None:
        await run_in_process(session_factory=session_factory, run_id=run_id)

    started: concurrent.futures.Future[None] = manager.spawn(work)
    return started
