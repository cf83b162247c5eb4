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
from dataclasses import dataclass

import httpx
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

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


@dataclass(frozen=True)
class _Parts:
    """What a worker opens for itself, closed together when it stops."""

    engine: Engine
    session_factory: sessionmaker[Session]
    http: httpx.AsyncClient
    pool: AsyncConnectionPool
    jobs: JobQueue
    queue: RunQueue
    manager: RunManager
    limits: PostgresEngineLimits
    js_pool: JsPool  # the JavaScript workers of this worker's scoring
    previous_pool: JsPool | None


async def run_worker(
    settings: Settings,
    *,
    concurrency: int,
    name: str | None = None,
) -> None:
    """Do the queue's jobs (runs' chunks, judge runs, the minute's work) until told to stop."""
    register_jobs()
    parts = _build(settings)
    await parts.pool.open()
    await parts.queue.open()
    try:
        await _work(parts, settings, concurrency=concurrency, name=name)
    finally:
        await _close(parts)


def _build(settings: Settings) -> _Parts:
    """Return the worker's database, HTTP client, queues and JavaScript pool, not yet opened."""
    url = settings.resolved_database_url
    engine = make_engine(url)
    migrate(engine)
    session_factory = make_session_factory(engine)
    install_policy(policy_of(settings))
    http = engine_http_client()
    pool = _connection_pool(url)
    jobs = JobQueue(url)
    queue = _run_queue(settings, url, session_factory, jobs)
    manager = _run_manager(settings, session_factory, queue)
    limits = PostgresEngineLimits(pool)
    js_pool = JsPool()
    previous_pool = install_pool(js_pool)
    return _Parts(
        engine, session_factory, http, pool, jobs, queue, manager, limits, js_pool, previous_pool
    )


def _connection_pool(url: str) -> AsyncConnectionPool:
    """Return the (closed) pool of connections the engines' shared limits are kept through."""
    return AsyncConnectionPool(
        libpq_url(url), min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
    )


def _run_queue(
    settings: Settings, url: str, session_factory: sessionmaker[Session], jobs: JobQueue
) -> RunQueue:
    """Return the queue of runs' chunks, on the worker's own database connection."""
    return RunQueue(
        database_url=url,
        session_factory=session_factory,
        chunk_size=settings.run_chunk_size,
        jobs=jobs,
    )


def _run_manager(
    settings: Settings, session_factory: sessionmaker[Session], queue: RunQueue
) -> RunManager:
    """Return the run manager that puts stopped workers' chunks back and marks lost runs."""
    return RunManager(
        session_factory=session_factory,
        lease_s=settings.run_lease_s,
        queue=queue,
        stalled_s=settings.worker_stalled_s,
    )


def _resources(parts: _Parts, concurrency: int) -> Resources:
    """Return what the jobs use: the search client, the judges' slots and the run starter."""
    resources = Resources()
    resources.put(SEARCH, SearchClient(parts.http, shared=parts.limits))
    resources.put(JUDGES, JudgeSlots(JudgeClient(parts.http), slots=max(1, concurrency - 1)))
    resources.put(START_RUN, parts.queue.enqueue)
    return resources


async def _work(parts: _Parts, settings: Settings, *, concurrency: int, name: str | None) -> None:
    """Look after the queue and do its jobs until the worker is told to stop."""
    resources = _resources(parts, concurrency)
    parts.manager.start_reaper()
    await parts.jobs.work(
        Job(parts.session_factory, resources),
        concurrency=concurrency,
        name=name or f"{socket.gethostname()}-{os.getpid()}",
        stalled_s=float(settings.worker_stalled_s),
        graceful_s=GRACEFUL_STOP_S,
    )


async def _close(parts: _Parts) -> None:
    """Close what the worker opened, the shared limits first and the database last."""
    await parts.limits.aclose()
    await parts.manager.aclose()
    await parts.queue.close()
    await parts.pool.close()
    await parts.http.aclose()
    install_pool(parts.previous_pool)
    parts.js_pool.close()
    parts.engine.dispose()
