"""`relevo worker`: do the queue's jobs until stopped (SIGINT or SIGTERM).

A worker opens its own database engine, HTTP client and queue connection; the engines'
limits it applies are shared with every other worker through PostgreSQL. It also looks
after the queue as the web app does: chunks of workers that stopped go back to the queue,
and runs left with no chunk and no heartbeat are marked interrupted.
"""

from __future__ import annotations

import logging
import os
import socket

from psycopg_pool import AsyncConnectionPool

from app.config import Settings
from app.db import make_engine, make_session_factory, migrate
from app.jobs.queue import JobQueue, libpq_url
from app.jobs.registry import Job, Resources
from app.judges.client import JudgeClient
from app.judges.tasks import JUDGES, JudgeSlots
from app.outbound.policy import install_policy, policy_of
from app.outbound.transport import engine_http_client
from app.registration import register_jobs
from app.runs.engine_limits import PostgresEngineLimits
from app.runs.manager import RunManager
from app.runs.queue import START_RUN, RunQueue
from app.runs.tasks import SEARCH
from app.sandbox import JsPool, install_pool
from app.search import SearchClient

__all__ = ["run_worker"]

log = logging.getLogger(__name__)
# After SIGTERM, chunks get this long to finish before they are stopped and put back.
GRACEFUL_STOP_S = 10.0


async def run_worker(
    settings: Settings,
    *,
    concurrency: int,
    name: str | None = None,
) -> None:
    """Do the queue's jobs (runs' chunks, judge runs, the minute's work) until told to stop."""
    register_jobs()
    url = settings.resolved_database_url
    engine = make_engine(url)
    migrate(engine)
    session_factory = make_session_factory(engine)
    install_policy(policy_of(settings))
    http = engine_http_client()
    pool: AsyncConnectionPool = AsyncConnectionPool(
        libpq_url(url), min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
    )
    jobs = JobQueue(url)
    queue = RunQueue(
        database_url=url,
        session_factory=session_factory,
        chunk_size=settings.run_chunk_size,
        jobs=jobs,
    )
    manager = RunManager(
        session_factory=session_factory,
        lease_s=settings.run_lease_s,
        queue=queue,
        stalled_s=settings.worker_stalled_s,
    )
    limits = PostgresEngineLimits(pool)
    js_pool = JsPool()  # the JavaScript workers of this worker's scoring
    previous_pool = install_pool(js_pool)
    await pool.open()
    await queue.open()
    try:
        resources = Resources()
        resources.put(SEARCH, SearchClient(http, shared=limits))
        resources.put(JUDGES, JudgeSlots(JudgeClient(http), slots=max(1, concurrency - 1)))
        resources.put(START_RUN, queue.enqueue)
        manager.start_reaper()
        await jobs.work(
            Job(session_factory, resources),
            concurrency=concurrency,
            name=name or f"{socket.gethostname()}-{os.getpid()}",
            stalled_s=float(settings.worker_stalled_s),
            graceful_s=GRACEFUL_STOP_S,
        )
    finally:
        await limits.aclose()
        await manager.aclose()
        await queue.close()
        await pool.close()
        await http.aclose()
        install_pool(previous_pool)
        js_pool.close()
        engine.dispose()
