"""The durable job queue on PostgreSQL (procrastinate), for any number of workers.

The queue knows no domain: it carries the tasks registered (``registry.register_task``) and
one periodic job a minute that calls the ``MINUTE`` hook. A worker that dies mid-job stops
sending its heartbeat; its jobs can then be put back (``retry_stalled``) and done again by
another worker.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy
from procrastinate.types import JSONDict
from sqlalchemy.engine import make_url

from app.jobs.registry import MINUTE, Job, TaskSpec, registered_tasks

__all__ = ["JOB_QUEUE", "MINUTE_TASK", "JobQueue", "build_job_app", "libpq_url"]

log = logging.getLogger(__name__)

# The procrastinate queue every job goes to (named when it carried only runs).
JOB_QUEUE = "runs"
MINUTE_TASK = "relevo.minute"
MINUTE_ID = "minute"
CONTEXT_KEY = "relevo"

_LIVE = """
SELECT DISTINCT (args->>%(key)s)::bigint AS value
  FROM procrastinate_jobs
 WHERE status IN ('todo', 'doing') AND task_name = %(task)s
"""
_DROP_TODO = """
DELETE FROM procrastinate_jobs
 WHERE status = 'todo' AND task_name = %(task)s AND (args->>%(key)s)::bigint = %(value)s
"""


def libpq_url(database_url: str) -> str:
    """Return a SQLAlchemy PostgreSQL URL as the connection string libpq understands."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise ValueError("The job queue needs PostgreSQL (DATABASE_URL=postgresql://...).")
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def _bound(spec: TaskSpec) -> Any:
    async def work(context: JobContext, **args: Any) -> None:
        job: Job = context.additional_context[CONTEXT_KEY]
        await spec.work(job, **args)

    work.__name__ = work.__qualname__ = spec.name.replace(".", "_")
    return work


async def _minute(context: JobContext, timestamp: int) -> None:
    # procrastinate defers each periodic tick once, whatever the number of workers.
    job: Job = context.additional_context[CONTEXT_KEY]
    await MINUTE(job)


def build_job_app(database_url: str) -> App:
    """Return the queue's procrastinate app (not yet open) with the tasks registered now."""
    job_app = App(connector=PsycopgConnector(conninfo=libpq_url(database_url)))
    for spec in registered_tasks():
        retry: bool | RetryStrategy = (
            RetryStrategy(max_attempts=spec.attempts) if spec.attempts else False
        )
        job_app.task(name=spec.name, queue=JOB_QUEUE, pass_context=True, retry=retry)(_bound(spec))
    job_app.periodic(cron="* * * * *", periodic_id=MINUTE_ID)(
        job_app.task(name=MINUTE_TASK, queue=JOB_QUEUE, pass_context=True)(_minute)
    )
    return job_app


class JobQueue:
    """Puts jobs in the queue, looks after it, and is what a worker works from."""

    def __init__(self, database_url: str) -> None:
        self.job_app = build_job_app(database_url)

    async def open(self) -> None:
        """Open the queue's connection pool."""
        await self.job_app.open_async()

    async def close(self) -> None:
        """Close the queue's connection pool."""
        await self.job_app.close_async()

    async def defer(self, task: str, /, **args: Any) -> None:
        """Put one job of ``task`` in the queue."""
        await self.job_app.configure_task(task, queue=JOB_QUEUE).defer_async(**args)

    async def defer_many(self, task: str, jobs: Sequence[Mapping[str, Any]]) -> None:
        """Put jobs of ``task`` in the queue at once, one per mapping of arguments."""
        batch: list[JSONDict] = [dict(args) for args in jobs]
        await self.job_app.configure_task(task, queue=JOB_QUEUE).batch_defer_async(*batch)

    async def defer_in(self, task: str, seconds: float, /, **args: Any) -> None:
        """Put one job of ``task`` in the queue, to be done ``seconds`` from now."""
        configured = self.job_app.configure_task(
            task, queue=JOB_QUEUE, schedule_in={"seconds": int(seconds)}
        )
        await configured.defer_async(**args)

    async def drop_todo(self, task: str, *, key: str, value: int) -> None:
        """Remove the jobs of ``task`` whose argument ``key`` is ``value`` and no worker took."""
        await self.job_app.connector.execute_query_async(
            _DROP_TODO, task=task, key=key, value=value
        )

    async def live(self, task: str, *, key: str) -> list[int]:
        """Return the values of argument ``key`` among the jobs of ``task`` not yet done."""
        rows: Sequence[dict[str, Any]] = await self.job_app.connector.execute_query_all_async(
            _LIVE, task=task, key=key
        )
        return [int(row["value"]) for row in rows]

    async def retry_stalled(self, task: str, stalled_s: float) -> int:
        """Put back the jobs of ``task`` of workers silent for ``stalled_s``; return how many."""
        stalled = list(
            await self.job_app.job_manager.get_stalled_jobs(
                queue=JOB_QUEUE, task_name=task, seconds_since_heartbeat=stalled_s
            )
        )
        for one in stalled:
            log.warning("putting back job %s of a worker that stopped", one.id)
            await self.job_app.job_manager.retry_job(one)
        return len(stalled)

    async def work(
        self,
        job: Job,
        *,
        concurrency: int,
        name: str,
        stalled_s: float,
        graceful_s: float,
    ) -> None:
        """Do the queue's jobs, ``concurrency`` at once, until the process is told to stop.

        Every job is given ``job`` (its queue set to this one).
        """
        job.queue = self
        await self.job_app.run_worker_async(
            queues=[JOB_QUEUE],
            concurrency=concurrency,
            name=name,
            additional_context={CONTEXT_KEY: job},
            update_heartbeat_interval=max(stalled_s / 3, 0.5),
            stalled_worker_timeout=stalled_s,
            shutdown_graceful_timeout=graceful_s,
            delete_jobs="successful",
            install_signal_handlers=True,
        )
