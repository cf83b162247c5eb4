"""`relevo worker`: execute queued runs' chunks until stopped (SIGINT or SIGTERM).

A worker opens its own database engine, HTTP client and queue connection; the engines'
limits it applies are shared with every other worker through PostgreSQL. It also looks
after the queue as the web app does: chunks of workers that stopped go back to the queue,
and runs left with no chunk and no heartbeat are marked interrupted.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence

from psycopg_pool import AsyncConnectionPool

from app.config import Settings
from app.db import make_engine, make_session_factory, migrate
from app.judges.client import JudgeClient
from app.runs.engine_limits import PostgresEngineLimits
from app.runs.manager import AfterReap, RunManager
from app.runs.queue import RUN_QUEUE, RunQueue, WorkerDeps, libpq_url
from app.scoring.sandbox import JsPool, install_pool
from app.search import SearchClient
from app.search.policy import install_policy, policy_of
from app.search.transport import engine_http_client

__all__ = ["run_worker"]

log = logging.getLogger(__name__)
# After SIGTERM, chunks get this long to finish before they are stopped and put back.
GRACEFUL_STOP_S = 10.0


async def run_worker(
    settings: Settings,
    *,
    concurrency: int,
    name: str | None = None,
    after_reap: Sequence[AfterReap] = (),
) -> None:
    """Execute chunks from the queue until the process is told to stop.

    ``after_reap`` is the reaper's work after each round (see ``RunManager``).
    """
    url = settings.resolved_database_url
    engine = make_engine(url)
    migrate(engine)
    session_factory = make_session_factory(engine)
    install_policy(policy_of(settings))
    http = engine_http_client()
    pool: AsyncConnectionPool = AsyncConnectionPool(
        libpq_url(url), min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
    )
    queue = RunQueue(
        database_url=url, session_factory=session_factory, chunk_size=settings.run_chunk_size
    )
    manager = RunManager(
        session_factory=session_factory,
        lease_s=settings.run_lease_s,
        queue=queue,
        stalled_s=settings.worker_stalled_s,
        after_reap=after_reap,
    )
    limits = PostgresEngineLimits(pool)
    js_pool = JsPool()  # the JavaScript workers of this worker's scoring
    previous_pool = install_pool(js_pool)
    await pool.open()
    await queue.open()
    try:
        search = SearchClient(http, shared=limits)
        manager.start_reaper()
        stalled = float(settings.worker_stalled_s)
        await queue.job_app.run_worker_async(
            queues=[RUN_QUEUE],
            concurrency=concurrency,
            name=name or f"{socket.gethostname()}-{os.getpid()}",
            additional_context={
                "relevo": WorkerDeps(
                    session_factory,
                    search,
                    JudgeClient(http),
                    judge_slots=max(1, concurrency - 1),
                )
            },
            update_heartbeat_interval=max(stalled / 3, 0.5),
            stalled_worker_timeout=stalled,
            shutdown_graceful_timeout=GRACEFUL_STOP_S,
            delete_jobs="successful",
            install_signal_handlers=True,
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
