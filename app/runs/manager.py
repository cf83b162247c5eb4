"""Runs started by the web app: one shared httpx client, tasks kept until they end.

With a job queue (PostgreSQL), starting a run puts its chunks in the queue for workers and
the run's task only watches it until it ends; without one (SQLite), the run executes in
this process. The manager also bounds how many requests of one user wait for their run at
once, and every half lease marks as interrupted the runs whose executing process has gone
silent (with a queue: after putting back the chunks of workers that stopped, and followed by
the work added to the ``REAPED`` hook, such as closing the sweeps whose runs have ended).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.errors import TooManyRequests
from app.outbound.transport import engine_http_client
from app.runs import orphans as run_orphans
from app.runs import service as run_service
from app.runs.events import REAPED, Reaped
from app.runs.runner import execute_run
from app.search import SearchClient
from app.vocabulary import ACTIVE_RUN_STATUSES

if TYPE_CHECKING:
    from app.runs.queue import RunQueue

log = logging.getLogger(__name__)

WATCH_EVERY_S = 0.25  # how often a queued run's status is read while someone waits for it
# On shutdown, runs being put in the queue get this long to get there (else they are queued
# again by a reaper after a lease, as runs whose server stopped before queueing them).
ENQUEUE_GRACE_S = 5.0


class RunManager:
    """Starts runs in the current event loop and closes them down with the app.

    After every round of looking after a queue's runs (those end on workers, in no
    process's care), the ``REAPED`` hook is called.
    """

    def __init__(
        self,
        *,
        session_factory: sessionmaker[Session],
        loop: asyncio.AbstractEventLoop | None = None,
        max_waits_per_user: int = 4,
        lease_s: float = 60,
        queue: RunQueue | None = None,
        stalled_s: float = 30,
    ) -> None:
        self._session_factory = session_factory
        self._loop = loop
        self._max_waits = max_waits_per_user
        self._waits: Counter[int] = Counter()
        self._lease_s = lease_s
        self._reaper: asyncio.Task[None] | None = None
        self._http: httpx.AsyncClient | None = None
        self._search: SearchClient | None = None
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._enqueues: set[asyncio.Future[int]] = set()
        self._queue = queue
        self._stalled_s = stalled_s
        self._reaper_rounds = 0

    @property
    def session_factory(self) -> sessionmaker[Session]:
        """The sessions the manager's runs (and the work given to it) use."""
        return self._session_factory

    @property
    def reaper_rounds(self) -> int:
        """How many rounds of looking after runs have been completed (``reap``)."""
        return self._reaper_rounds

    def under_way(self, run_id: int) -> bool:
        """Return whether this manager's task for the run (executing or watching) goes on."""
        return run_id in self._tasks

    @property
    def queue(self) -> RunQueue | None:
        """The job queue runs go to, or None when they execute in this process."""
        return self._queue

    def _client(self) -> SearchClient:
        if self._search is None:
            self._http = engine_http_client()
            self._search = SearchClient(self._http)
        return self._search

    def http_client(self) -> httpx.AsyncClient:
        """Return the process's client for outbound calls (made on first use, closed with the
        manager): runs, and the judges' calls of this process (``judges.launch``), use it."""
        self._client()
        assert self._http is not None
        return self._http

    def start(self, run_id: int) -> asyncio.Task[None]:
        """Start a queued run (in-process, or its chunks for workers); the task ends with it."""
        if self._queue is not None:
            task = asyncio.create_task(self._queued(run_id, self._queue))
        else:
            task = asyncio.create_task(
                execute_run(
                    session_factory=self._session_factory, run_id=run_id, search=self._client()
                )
            )
        self._tasks[run_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(run_id, None))
        return task

    async def _queued(self, run_id: int, queue: RunQueue) -> None:
        # The enqueue is shielded: a shutdown that cancels this watcher lets it finish.
        enqueue = asyncio.ensure_future(queue.enqueue(run_id))
        self._enqueues.add(enqueue)
        enqueue.add_done_callback(self._enqueued)
        try:
            await asyncio.shield(enqueue)
        except Exception as exc:
            log.exception("could not queue run %s", run_id)
            await asyncio.to_thread(self._fail, run_id, f"Could not queue the run: {exc}")
            return
        while await asyncio.to_thread(self._status, run_id) in ACTIVE_RUN_STATUSES:
            await asyncio.sleep(WATCH_EVERY_S)

    def _enqueued(self, enqueue: asyncio.Future[int]) -> None:
        self._enqueues.discard(enqueue)
        if not enqueue.cancelled():
            enqueue.exception()  # seen here too: a watcher cancelled meanwhile cannot log it

    def _status(self, run_id: int) -> str | None:
        with session_scope(self._session_factory) as session:
            return run_service.status_of(session=session, run_id=run_id)

    def _fail(self, run_id: int, message: str) -> None:
        with session_scope(self._session_factory) as session:
            run_service.mark_failed(session=session, run_id=run_id, message=message)

    def cancelled(self, run_id: int) -> None:
        """Drop a cancelled run's chunks that no worker has started yet (from a request thread).

        Workers would drop them anyway when they reach them; this only spares the queue.
        """
        queue = self._queue
        if queue is not None and self._loop is not None:
            asyncio.run_coroutine_threadsafe(queue.drop_queued(run_id), self._loop)

    def submit(self, run_id: int) -> concurrent.futures.Future[None]:
        """Start a run from a request thread; the future completes when the run ends."""
        if self._loop is None:
            raise RuntimeError("This run manager has no event loop to run in.")

        async def started() -> None:
            await self.start(run_id)

        return asyncio.run_coroutine_threadsafe(started(), self._loop)

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]:
        """Run a coroutine (a sweep) in the manager's loop from a request thread."""
        if self._loop is None:
            raise RuntimeError("This run manager has no event loop to run in.")
        return asyncio.run_coroutine_threadsafe(work(), self._loop)

    async def run(self, run_id: int) -> None:
        """Start a queued run and wait until it ends (as a sweep does for each combination)."""
        await self.start(run_id)

    @contextlib.contextmanager
    def wait_slot(self, user_id: int) -> Iterator[None]:
        """Hold one of the user's waiting slots while a request waits for its run (else 429)."""
        if self._waits[user_id] >= self._max_waits:
            raise TooManyRequests(
                f"You already have {self._max_waits} requests waiting for their runs: start "
                "this run without ?wait=true and poll it, or retry when one has finished.",
                retry_after_s=5,
            )
        self._waits[user_id] += 1
        try:
            yield
        finally:
            self._waits[user_id] -= 1
            if not self._waits[user_id]:
                del self._waits[user_id]

    def reap_interrupted(self, spare: list[int] | None = None) -> int:
        """Mark as failed the runs whose process stopped sending heartbeats; return how many.

        ``spare`` runs (chunks still in the job queue) are left alone.
        """
        with session_scope(self._session_factory) as session:
            return run_orphans.fail_interrupted_runs(
                session=session, lease_s=self._lease_s, spare=spare or ()
            )

    def _claim_unqueued(self, spare: list[int]) -> list[int]:
        with session_scope(self._session_factory) as session:
            return run_orphans.claim_unqueued_runs(
                session=session, lease_s=self._lease_s, spare=spare
            )

    async def reap(self) -> int:
        """One round of looking after the runs of processes that stopped."""
        spare: list[int] = []
        if self._queue is not None:
            await self._queue.retry_stalled(self._stalled_s)
            spare = await self._queue.live_run_ids()
            for run_id in await asyncio.to_thread(self._claim_unqueued, spare):
                log.warning("queueing run %s, whose server stopped before queueing it", run_id)
                await self._queue.enqueue(run_id)
                spare.append(run_id)
        count = await asyncio.to_thread(self.reap_interrupted, spare)
        if self._queue is not None:
            await REAPED(Reaped(session_factory=self._session_factory))
        self._reaper_rounds += 1
        return count

    def start_reaper(self) -> None:
        """Check for interrupted runs now and every half lease (or stall), in this event loop."""

        async def reap_forever() -> None:
            while True:
                try:
                    count = await self.reap()
                except Exception:  # the database may be briefly away; try again next time
                    log.exception("could not check for interrupted runs")
                else:
                    if count:
                        log.warning("marked %s interrupted runs as failed", count)
                every = self._lease_s / 2
                if self._queue is not None:
                    every = min(every, self._stalled_s / 2)
                await asyncio.sleep(max(every, 0.5))

        self._reaper = asyncio.create_task(reap_forever())

    async def aclose(self) -> None:
        """Let runs being queued get there, cancel in-process runs (marked failed), close.

        A queued run's task only watches it: cancelling that leaves the run to the workers.
        """
        if self._reaper is not None:
            self._reaper.cancel()
            await asyncio.gather(self._reaper, return_exceptions=True)
        if self._enqueues:
            await asyncio.wait(set(self._enqueues), timeout=ENQUEUE_GRACE_S)
        for task in list(self._tasks.values()):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()
