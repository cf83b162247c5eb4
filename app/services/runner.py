"""The runner: fetch every query of a run concurrently, score, persist.

`execute_run` is a plain coroutine of (session factory, run id, search client): the web
app awaits it in-process, the CLI with asyncio.run, and a worker process can do the same.
Database work goes to a thread so that fetching never waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.errors import public_message
from app.search import EngineError, SearchClient
from app.services import queries as query_service
from app.services import runs as run_service
from app.services.runs import FetchedQuery, QueryPlan, RunPlan, RunSetupError

log = logging.getLogger(__name__)
T = TypeVar("T")
PROGRESS_EVERY_S = 0.5  # the case page polls every 500 ms


async def in_thread(factory: sessionmaker[Session], fn: Callable[..., T], **kwargs: Any) -> T:
    """Call a service function with a fresh session in a worker thread."""

    def work() -> T:
        with session_scope(factory) as session:
            return fn(session=session, **kwargs)

    return await asyncio.to_thread(work)


async def execute_run(
    *, session_factory: sessionmaker[Session], run_id: int, search: SearchClient
) -> None:
    """Run a queued run to the end; failures of single queries are recorded, not raised."""
    db = session_factory
    try:
        plan = await in_thread(db, run_service.load_plan, run_id=run_id)
    except Exception as exc:  # a run that cannot start is a failed run, never a crash
        message = (
            str(exc)
            if isinstance(exc, RunSetupError)
            else f"Could not start: {public_message(exc)}"
        )
        await in_thread(db, run_service.mark_failed, run_id=run_id, message=message)
        return
    try:
        await in_thread(db, run_service.mark_running, run_id=run_id, total=len(plan.queries))
        fetched = await _fetch_all(db, plan, search)
        query_ids = [q.query_id for q in plan.queries]
        ratings = await in_thread(db, query_service.ratings_of, query_ids=query_ids)
        outcomes = await asyncio.to_thread(
            run_service.score_fetched, plan=plan, fetched=fetched, ratings=ratings
        )
        await in_thread(
            db,
            run_service.finish_run,
            plan=plan,
            fetched=fetched,
            outcomes=outcomes,
            ratings=ratings,
        )
    except asyncio.CancelledError:
        await in_thread(db, run_service.mark_failed, run_id=run_id, message="Cancelled.")
        raise
    except Exception as exc:
        log.exception("run %s failed", run_id)
        await in_thread(
            db, run_service.mark_failed, run_id=run_id, message=f"Run failed: {public_message(exc)}"
        )


async def _fetch_all(
    db: sessionmaker[Session], plan: RunPlan, search: SearchClient
) -> list[FetchedQuery]:
    done = 0
    finished = asyncio.Event()

    async def one(query: QueryPlan) -> FetchedQuery:
        nonlocal done
        result = await fetch_query(plan, query, search)
        done += 1
        return result

    async def report_progress() -> None:
        reported = -1
        while not finished.is_set():
            if done != reported:
                reported = done
                await in_thread(db, run_service.record_progress, run_id=plan.run_id, done=done)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(finished.wait(), PROGRESS_EVERY_S)

    reporter = asyncio.create_task(report_progress())
    try:
        return list(await asyncio.gather(*(one(q) for q in plan.queries)))
    finally:
        finished.set()
        await reporter


async def fetch_query(plan: RunPlan, query: QueryPlan, search: SearchClient) -> FetchedQuery:
    """Fetch one query's results; an engine problem becomes that query's error."""
    started = time.perf_counter()
    try:
        result = await search.search(plan.endpoint, plan.request_for(query))
    except EngineError as exc:
        return FetchedQuery(
            plan=query,
            docs=None,
            num_found=None,
            error=str(exc),
            duration_ms=(time.perf_counter() - started) * 1000,
        )
    docs = [
        {
            "id": doc.id,
            "rank": doc.position,
            "fields": doc.fields,
            **({"explain": doc.explain} if doc.explain is not None else {}),
        }
        for doc in result.docs
    ]
    return FetchedQuery(
        plan=query,
        docs=docs,
        num_found=result.num_found,
        error=None,
        duration_ms=(time.perf_counter() - started) * 1000,
    )
