"""The runner: fetch every query of a run concurrently, score, persist.

`execute_run` is a plain coroutine of (session factory, run id, search client): the web
app awaits it in-process, the CLI with asyncio.run, and a worker process can do the same.
Database work goes to a thread so that fetching never waits on it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.errors import NotFound, public_message
from app.queries.service import ratings_of
from app.runs import inputs as run_inputs
from app.runs import service as run_service
from app.runs import store as run_store
from app.runs.events import RUN_ENDED, RunEnded
from app.runs.plan import (
    FetchedQuery,
    MetricScores,
    QueryPlan,
    RunPlan,
    RunSetupError,
    score_fetched_metrics,
)
from app.sandbox import in_scoring_thread
from app.scoring import Outcome
from app.search import EngineError, SearchClient, SearchResult
from app.vocabulary import ACTIVE_RUN_STATUSES

log = logging.getLogger(__name__)
T = TypeVar("T")
PROGRESS_EVERY_S = 0.5  # the case page polls every 500 ms
HEARTBEAT_EVERY_S = 5.0  # well inside Settings.run_lease_s
EMPTY_RESULT = SearchResult(docs=[], num_found=0)  # a query a result file lacks
# What a chunk's work ends with, in place of finishing the run.
Store = Callable[[list[FetchedQuery], list[Outcome], Any, list[MetricScores]], Awaitable[None]]


async def in_thread(factory: sessionmaker[Session], fn: Callable[..., T], **kwargs: Any) -> T:
    """Call a service function with a fresh session in a worker thread."""

    def work() -> T:
        with session_scope(factory) as session:
            return fn(session=session, **kwargs)

    return await asyncio.to_thread(work)


@dataclass
class _Progress:
    """How many of the run's queries have come back (read by the heartbeat), and the moment
    the last wave of them is in flight."""

    done: int = 0
    last_wave_at: int = 0
    last_wave: asyncio.Event = field(default_factory=asyncio.Event)

    def advance(self) -> None:
        """Count one more query back."""
        self.done += 1
        if self.done >= self.last_wave_at:
            self.last_wave.set()


async def execute_run(
    *, session_factory: sessionmaker[Session], run_id: int, search: SearchClient
) -> None:
    """Run a queued run to the end; failures of single queries are recorded, not raised.

    While it works, a heartbeat records progress and that this process is alive, and stops
    the work when the run was cancelled (from any process) or declared interrupted.
    """
    db = session_factory
    try:
        plan = await in_thread(db, run_inputs.load_plan, run_id=run_id)
    except Exception as exc:  # a run that cannot start is a failed run, never a crash
        await in_thread(db, run_service.mark_failed, run_id=run_id, message=_not_started(exc))
        return
    try:
        await in_thread(db, run_store.mark_running, plan=plan)
    except Exception as exc:
        await in_thread(db, run_service.mark_failed, run_id=run_id, message=public_message(exc))
        return
    progress = _Progress()  # the heartbeat starts once the run carries this lease
    work = asyncio.create_task(_work(db, plan, search, progress))
    beat = asyncio.create_task(_heartbeat(db, plan, progress, work))
    try:
        await work
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or not current.cancelling():
            return  # stopped by the heartbeat: the run already says cancelled or failed
        # The process is stopping: say so, unless the run ended meanwhile.
        await in_thread(db, run_service.mark_failed, run_id=run_id, message=STOPPED)
        raise
    except Exception as exc:
        log.exception("run %s failed", run_id)
        await in_thread(
            db, run_service.mark_failed, run_id=run_id, message=f"Run failed: {public_message(exc)}"
        )
    finally:
        beat.cancel()
        await asyncio.gather(beat, return_exceptions=True)
    await _ended(db, run_id)


STOPPED = "Interrupted: the server stopped during the run."


async def execute_chunk(
    *,
    session_factory: sessionmaker[Session],
    run_id: int,
    chunk: int,
    query_ids: list[int],
    search: SearchClient,
) -> None:
    """Execute one chunk of a run split for workers, and commit its results.

    A chunk of a run that has ended (cancelled, failed) does nothing. The run finishes
    when its last chunk commits, in whichever process that happens. A chunk that fails as
    a whole fails its run; a process killed mid-chunk leaves the chunk to be retried.
    """
    db = session_factory
    plan = await _start_chunk(db, run_id, query_ids)
    if plan is None:
        return
    await _run_chunk(db, plan, search, _chunk_store(db, plan, chunk, query_ids), chunk)
    await _ended(db, run_id)


def _not_started(exc: Exception) -> str:
    # Why a run (or a chunk of it) could not start, as its failure says.
    if isinstance(exc, RunSetupError):
        return str(exc)
    return f"Could not start: {public_message(exc)}"


async def _start_chunk(
    db: sessionmaker[Session], run_id: int, query_ids: list[int]
) -> RunPlan | None:
    # The chunk's plan, once its start is recorded; None when there is nothing to do.
    try:
        plan = await in_thread(db, run_inputs.load_plan, run_id=run_id, query_ids=query_ids)
        if not await in_thread(db, run_store.start_chunk, plan=plan):
            return None  # the run has ended: a queued chunk is dropped
    except NotFound:
        return None  # the run was deleted with its case
    except Exception as exc:
        await in_thread(db, run_service.mark_failed, run_id=run_id, message=_not_started(exc))
        return None
    return plan


def _chunk_store(
    db: sessionmaker[Session], plan: RunPlan, chunk: int, query_ids: list[int]
) -> Store:
    # What the chunk's work ends with: committing its results (store.store_chunk).
    async def store(
        fetched: list[FetchedQuery],
        outcomes: list[Outcome],
        ratings: Any,
        metric_scores: list[MetricScores],
    ) -> None:
        await in_thread(
            db,
            run_store.store_chunk,
            plan=plan,
            chunk=chunk,
            query_ids=query_ids,
            fetched=fetched,
            outcomes=outcomes,
            ratings=ratings,
            metric_scores=metric_scores,
        )

    return store


async def _run_chunk(
    db: sessionmaker[Session], plan: RunPlan, search: SearchClient, store: Store, chunk: int
) -> None:
    # The chunk's work under the run's shared heartbeat. A worker stopping re-raises (the
    # chunk is retried by another); any other failure of the chunk fails its run.
    progress = _Progress()
    work = asyncio.create_task(_work(db, plan, search, progress, store))
    beat = asyncio.create_task(_heartbeat(db, plan, progress, work, shared=True))
    try:
        await work
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the worker is stopping: the chunk is retried by another
    except Exception as exc:
        log.exception("chunk %s of run %s failed", chunk, plan.run_id)
        await in_thread(
            db,
            run_service.mark_failed,
            run_id=plan.run_id,
            message=f"Run failed: {public_message(exc)}",
        )
    finally:
        beat.cancel()
        await asyncio.gather(beat, return_exceptions=True)


async def _ended(db: sessionmaker[Session], run_id: int) -> None:
    # The one place a run's end is seen, in whichever process ends it: the registered work
    # (schedules' alert rules) runs here.
    await RUN_ENDED(RunEnded(session_factory=db, run_id=run_id))


async def _work(
    db: sessionmaker[Session],
    plan: RunPlan,
    search: SearchClient,
    progress: _Progress,
    store: Store | None = None,
) -> None:
    # The ratings are read while the last wave of queries is in flight: off the run's
    # critical path, yet current to within one engine round trip of the fetch's end (a
    # rating given during a long run counts, as when they were read after it).
    query_ids = [q.query_id for q in plan.queries]
    progress.last_wave_at = len(plan.queries) - plan.endpoint.max_concurrency
    if progress.done >= progress.last_wave_at:
        progress.last_wave.set()
    reading = asyncio.create_task(_ratings_when(progress.last_wave, db, query_ids))
    try:
        fetched = await _fetch_all(plan, search, progress)
    except BaseException:
        reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)
        raise
    ratings = await reading
    # In the scoring threads, not the ones database work uses: a JavaScript batch may wait.
    # Every metric of the case in the same pass: one fetch, one set of scoring inputs.
    outcomes, metric_scores = await in_scoring_thread(
        functools.partial(score_fetched_metrics, plan=plan, fetched=fetched, ratings=ratings)
    )
    if store is not None:
        await store(fetched, outcomes, ratings, metric_scores)
        return
    await in_thread(
        db,
        run_store.finish_run,
        plan=plan,
        fetched=fetched,
        outcomes=outcomes,
        ratings=ratings,
        metric_scores=metric_scores,
    )


async def _ratings_when(
    ready: asyncio.Event, db: sessionmaker[Session], query_ids: list[int]
) -> dict[int, dict[str, float]]:
    await ready.wait()
    return await in_thread(db, ratings_of, query_ids=query_ids)


async def _heartbeat(
    db: sessionmaker[Session],
    plan: RunPlan,
    progress: _Progress,
    work: asyncio.Task[None],
    *,
    shared: bool = False,
) -> None:
    # Every PROGRESS_EVERY_S: the run's status is read (a cancel from any process stops the
    # work within that time); progress is written when it moved, the heartbeat at least
    # every HEARTBEAT_EVERY_S. A chunk (``shared``) writes only the heartbeat: the run's
    # progress is its committed results, counted when each chunk commits.
    written, last = -1, 0.0
    while not work.done():
        now = time.monotonic()
        if shared and now - last >= HEARTBEAT_EVERY_S:
            last = now
            status = await in_thread(db, run_store.touch_run, plan=plan)
        elif not shared and (progress.done != written or now - last >= HEARTBEAT_EVERY_S):
            written, last = progress.done, now
            status = await in_thread(db, run_store.record_progress, plan=plan, done=progress.done)
        else:
            status = await in_thread(db, run_store.run_status, plan=plan)
        if status not in ACTIVE_RUN_STATUSES:
            work.cancel()  # cancelled, interrupted elsewhere, or deleted with its case
            return
        await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)


async def _fetch_all(
    plan: RunPlan, search: SearchClient, progress: _Progress
) -> list[FetchedQuery]:
    async def one(query: QueryPlan) -> FetchedQuery:
        result = await fetch_query(plan, query, search)
        progress.advance()
        return result

    return list(await asyncio.gather(*(one(q) for q in plan.queries)))


async def fetch_query(plan: RunPlan, query: QueryPlan, search: SearchClient) -> FetchedQuery:
    """Fetch one query's results; an engine problem becomes that query's error."""
    started = time.perf_counter()
    try:
        if plan.static_results is not None:
            result = plan.static_results.get(query.query_id, EMPTY_RESULT)
        else:
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
