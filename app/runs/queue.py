"""Runs as jobs in a durable queue on PostgreSQL (procrastinate), for any number of workers.

A queued run is split into chunks of queries (``Settings.run_chunk_size``); each chunk is
one job, so several workers execute one run at once, and each chunk's results are
committed as it finishes (``store.store_chunk``). A worker that dies mid-chunk stops
sending its heartbeat; its chunks are then put back in the queue (``retry_stalled``) and
executed again by another worker, which replaces whatever the first one committed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy
from procrastinate.types import JSONDict, JSONValue
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.jobs import hooks
from app.judges.client import JudgeClient
from app.runs import store as run_store
from app.runs.runner import execute_chunk
from app.search import SearchClient

__all__ = ["CHUNK_TASK", "RUN_QUEUE", "RunQueue", "WorkerDeps", "build_job_app", "libpq_url"]

log = logging.getLogger(__name__)

RUN_QUEUE = "runs"
CHUNK_TASK = "relevo.run_chunk"
# A judge run is one job: a judge has one run under way at a time, held by one worker.
JUDGE_TASK = "relevo.judge_run"
# A judge run holds its worker slot for as long as the model takes, so runs of different
# users share the slots: a worker executes at most concurrency - 1 judge runs at once (one
# slot is always left to case runs' chunks), and one user has at most this many judge runs
# executing across all workers. A judge-run job over either limit goes back to the queue
# for JUDGE_RETRY_S, freeing its slot (and letting older jobs of other users go first).
JUDGE_RUNS_PER_USER = 2
JUDGE_RETRY_S = 2
SCHEDULES_TASK = "relevo.fire_schedules"
# A chunk stopped by its worker's shutdown goes back to the queue; a chunk whose own work
# failed has already failed its run and is not retried.
CHUNK_ATTEMPTS = 20

_LIVE_RUNS = """
SELECT DISTINCT (args->>'run_id')::bigint AS run_id
  FROM procrastinate_jobs
 WHERE status IN ('todo', 'doing') AND task_name = %(task)s
"""
_DROP_QUEUED = """
DELETE FROM procrastinate_jobs
 WHERE status = 'todo' AND task_name = %(task)s AND (args->>'run_id')::bigint = %(run_id)s
"""


class WorkerDeps:
    """What a worker's jobs use: the database, the HTTP client for engines, and one judge
    client for all its judge runs (whose limits they then share)."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        search: SearchClient,
        judges: JudgeClient | None = None,
        *,
        judge_slots: int | None = None,
    ) -> None:
        self.session_factory = session_factory
        self.search = search
        self.judges = judges
        self.judge_slots = judge_slots  # None: no limit of the worker's own
        self.judge_runs = 0

    def take_judge_slot(self) -> bool:
        """Count one more judge run executing here; False when the worker has its fill."""
        if self.judge_slots is not None and self.judge_runs >= self.judge_slots:
            return False
        self.judge_runs += 1
        return True

    def give_judge_slot(self) -> None:
        self.judge_runs -= 1


def libpq_url(database_url: str) -> str:
    """Return a SQLAlchemy PostgreSQL URL as the connection string libpq understands."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise ValueError("The job queue needs PostgreSQL (DATABASE_URL=postgresql://...).")
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


async def _run_chunk(context: JobContext, run_id: int, chunk: int, query_ids: list[int]) -> None:
    deps: WorkerDeps = context.additional_context["relevo"]
    await execute_chunk(
        session_factory=deps.session_factory,
        run_id=run_id,
        chunk=chunk,
        query_ids=query_ids,
        search=deps.search,
    )


async def _fire_schedules(context: JobContext, timestamp: int) -> None:
    # Every minute, one job (procrastinate defers each periodic tick once, whatever the
    # number of workers); the schedules' own claim makes each due time start one run even
    # if two ticks overlap. The runs it queues are split into chunks like any other.
    deps: WorkerDeps = context.additional_context["relevo"]
    job_app = context.app
    started: list[int] = []
    await hooks.minute(session_factory=deps.session_factory, start=started.append)
    # A judge run whose worker died (no heartbeat for a minute) goes back in the queue.
    from app.judges import runs as judge_runs

    with deps.session_factory() as session:
        for judge_run_id in judge_runs.resume_stale_runs(session=session):
            log.info("resuming judge run %s, left by a worker that stopped", judge_run_id)
            await job_app.configure_task(JUDGE_TASK, queue=RUN_QUEUE).defer_async(
                run_id=judge_run_id
            )
    for run_id in started:
        with session_scope(deps.session_factory) as session:
            chunks = run_store.plan_chunks(session=session, run_id=run_id, chunk_size=100)
        jobs: list[JSONDict] = [
            {"run_id": run_id, "chunk": number, "query_ids": list[JSONValue](ids)}
            for number, ids in enumerate(chunks)
        ]
        await job_app.configure_task(CHUNK_TASK, queue=RUN_QUEUE).batch_defer_async(*jobs)


def _user_has_room(factory: sessionmaker[Session], run_id: int) -> bool:
    from app.judges import runs as judge_runs

    with session_scope(factory) as session:
        return judge_runs.owner_has_room(
            session=session, run_id=run_id, per_user=JUDGE_RUNS_PER_USER
        )


async def _judge_run(context: JobContext, run_id: int) -> None:
    deps: WorkerDeps = context.additional_context["relevo"]
    if not deps.take_judge_slot():
        await _judge_run_later(context, run_id)
        return
    try:
        if not await asyncio.to_thread(_user_has_room, deps.session_factory, run_id):
            await _judge_run_later(context, run_id)
            return
        await _execute_judge_run(deps, run_id)
    finally:
        deps.give_judge_slot()


async def _judge_run_later(context: JobContext, run_id: int) -> None:
    task = context.app.configure_task(
        JUDGE_TASK, queue=RUN_QUEUE, schedule_in={"seconds": JUDGE_RETRY_S}
    )
    await task.defer_async(run_id=run_id)


async def _execute_judge_run(deps: WorkerDeps, run_id: int) -> None:
    from app.judges.runner import execute_judge_run
    from app.search.transport import engine_http_client

    if deps.judges is not None:
        await execute_judge_run(
            session_factory=deps.session_factory, run_id=run_id, client=deps.judges
        )
        return
    async with engine_http_client() as http:
        await execute_judge_run(
            session_factory=deps.session_factory, run_id=run_id, client=JudgeClient(http)
        )


def build_job_app(database_url: str) -> App:
    """Return the queue's procrastinate app (not yet open) for this database."""
    job_app = App(connector=PsycopgConnector(conninfo=libpq_url(database_url)))
    job_app.task(
        name=CHUNK_TASK,
        queue=RUN_QUEUE,
        pass_context=True,
        retry=RetryStrategy(max_attempts=CHUNK_ATTEMPTS),
    )(_run_chunk)
    job_app.task(name=JUDGE_TASK, queue=RUN_QUEUE, pass_context=True)(_judge_run)
    job_app.periodic(cron="* * * * *", periodic_id="schedules")(
        job_app.task(name=SCHEDULES_TASK, queue=RUN_QUEUE, pass_context=True)(_fire_schedules)
    )
    return job_app


class RunQueue:
    """Puts runs in the queue and looks after it: stalled chunks, runs still queued."""

    def __init__(
        self,
        *,
        database_url: str,
        session_factory: sessionmaker[Session],
        chunk_size: int = 100,
    ) -> None:
        self.job_app = build_job_app(database_url)
        self._session_factory = session_factory
        self._chunk_size = chunk_size

    async def open(self) -> None:
        """Open the queue's connection pool."""
        await self.job_app.open_async()

    async def close(self) -> None:
        """Close the queue's connection pool."""
        await self.job_app.close_async()

    def _plan(self, run_id: int) -> list[list[int]]:
        with session_scope(self._session_factory) as session:
            return run_store.plan_chunks(
                session=session, run_id=run_id, chunk_size=self._chunk_size
            )

    async def enqueue(self, run_id: int) -> int:
        """Split a queued run into chunk jobs; return how many."""
        chunks = await asyncio.to_thread(self._plan, run_id)
        jobs: list[JSONDict] = [
            {"run_id": run_id, "chunk": number, "query_ids": list[JSONValue](ids)}
            for number, ids in enumerate(chunks)
        ]
        await self.job_app.configure_task(CHUNK_TASK, queue=RUN_QUEUE).batch_defer_async(*jobs)
        return len(jobs)

    async def enqueue_judge_run(self, run_id: int) -> None:
        """Put a judge run in the queue, for whichever worker is free."""
        await self.job_app.configure_task(JUDGE_TASK, queue=RUN_QUEUE).defer_async(run_id=run_id)

    async def drop_queued(self, run_id: int) -> None:
        """Remove a run's chunks that no worker has started (after a cancel)."""
        await self.job_app.connector.execute_query_async(
            _DROP_QUEUED, task=CHUNK_TASK, run_id=run_id
        )

    async def live_run_ids(self) -> list[int]:
        """Return the runs that still have chunks queued or being executed."""
        rows: Sequence[dict[str, Any]] = await self.job_app.connector.execute_query_all_async(
            _LIVE_RUNS, task=CHUNK_TASK
        )
        return [int(row["run_id"]) for row in rows]

    async def retry_stalled(self, stalled_s: float) -> int:
        """Put back in the queue the chunks of workers silent for ``stalled_s``; return how many."""
        stalled = list(
            await self.job_app.job_manager.get_stalled_jobs(
                queue=RUN_QUEUE, task_name=CHUNK_TASK, seconds_since_heartbeat=stalled_s
            )
        )
        for job in stalled:
            log.warning("putting back chunk job %s of a worker that stopped", job.id)
            await self.job_app.job_manager.retry_job(job)
        return len(stalled)
