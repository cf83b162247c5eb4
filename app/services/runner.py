"""The runner: fetch every query of a run concurrently, score, persist.

`execute_run` is a plain coroutine of (session factory, run id, search client): the web
app awaits it in-process, the CLI with asyncio.run, and a worker process can do the same.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.search import EngineError, SearchClient, SearchError
from app.services import queries as query_service
from app.services import runs as run_service
from app.services.runs import FetchedQuery, QueryPlan, RunPlan, RunSetupError

log = logging.getLogger(__name__)
T = TypeVar("T")
PROGRESS_EVERY_S = 0.25


async def execute_run(
    *, session_factory: sessionmaker[Session], run_id: int, search: SearchClient
) -> None:
    """Run a queued run to the end; failures of single queries are recorded, not raised."""

    def in_session(work: Callable[[Session], T]) -> T:
        with session_scope(session_factory) as session:
            return work(session)

    try:
        plan = await asyncio.to_thread(
            in_session, lambda s: run_service.load_plan(session=s, run_id=run_id)
        )
    except (RunSetupError, Exception) as exc:  # a run that cannot start is a failed run
        message = str(exc) if isinstance(exc, RunSetupError) else f"Could not start: {exc}"
        await asyncio.to_thread(
            in_session, lambda s: run_service.mark_failed(session=s, run_id=run_id,
                                                          message=message)
        )
        return
    try:
        await asyncio.to_thread(
            in_session, lambda s: run_service.mark_running(session=s, run_id=run_id,
                                                           total=len(plan.queries))
        )
        fetched = await _fetch_all(plan, search, in_session)
        ratings = await asyncio.to_thread(
            in_session,
            lambda s: query_service.ratings_of(
                session=s, query_ids=[q.query_id for q in plan.queries]
            ),
        )
        outcomes = await asyncio.to_thread(
            lambda: run_service.score_fetched(plan=plan, fetched=fetched, ratings=ratings)
        )
        await asyncio.to_thread(
            in_session,
            lambda s: run_service.finish_run(session=s, plan=plan, fetched=fetched,
                                             outcomes=outcomes, ratings=ratings),
        )
    except asyncio.CancelledError:
        await asyncio.to_thread(
            in_session, lambda s: run_service.mark_failed(session=s, run_id=run_id,
                                                          message="Cancelled.")
        )
        raise
    except Exception as exc:
        log.exception("run %s failed", run_id)
        await asyncio.to_thread(
            in_session, lambda s: run_service.mark_failed(session=s, run_id=run_id,
                                                          message=f"Run failed: {exc}")
        )


async def _fetch_all(
    plan: RunPlan, search: SearchClient, in_session: Callable[[Callable[[Session], None]], None]
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
                count = done
                await asyncio.to_thread(
                    in_session,
                    lambda s: run_service.record_progress(session=s, run_id=plan.run_id,
                                                          done=count),
                )
            try:
                await asyncio.wait_for(finished.wait(), PROGRESS_EVERY_S)
            except TimeoutError:
                pass

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
    except (EngineError, SearchError) as exc:
        return FetchedQuery(plan=query, docs=None, num_found=None, error=str(exc),
                            duration_ms=(time.perf_counter() - started) * 1000)
    docs = [
        {"id": doc.id, "rank": doc.position, "fields": doc.fields,
         **({"explain": doc.explain} if doc.explain is not None else {})}
        for doc in result.docs
    ]
    return FetchedQuery(plan=query, docs=docs, num_found=result.num_found, error=None,
                        duration_ms=(time.perf_counter() - started) * 1000)
