"""The pool of JavaScript worker processes, owned by whoever runs scoring.

A few huge allocations (``new Array(2**28).fill(0)``, ``"x".repeat(2**28).split("")``) make
V8 abort its whole process; mini-racer's heap limit does not catch them. So the parent never
runs user code: a pool hands the encoded queries to a worker process (``worker.main``),
which scores them with the in-process engine of ``app.sandbox.javascript``.

Ownership
    A ``JsPool`` is created and closed by its owner: the web app's lifespan, a ``relevo
    worker`` process, a CLI command, a test. The owner installs it (``install_pool``) for the
    scoring code to use and puts the previous one back when it is done; nothing is started
    at import time and nothing is left to an exit hook. Scoring with no pool installed
    uses a pool of its own for that one call.

Processes and threads
    Workers start lazily, on the first batch, and are kept for later calls. A pool holds at
    most ``settings.workers`` of them; each batch takes one for its whole length (a new one
    if none is idle and the pool is not full, else it waits), so batches from several
    threads run side by side. One owner of work (a user) holds at most ``workers - 1`` at
    once, so another user's batch never waits behind it; the runner waits for its batch in
    the pool's own threads (``in_scoring_thread``), not the database's. A forked child of
    the parent forgets the parent's workers.

Crashes and hangs
    The parent waits for each frame at most the announced duration plus ``grace_s``; a worker
    that takes longer is killed (``process``). A worker that dies or is killed is replaced
    and the batch goes on from the first unfinished query (one lost before its first frame
    is ``WORKER_MESSAGE``, not the scorer's fault): if the fatal eval touched a single query,
    that query is an error (``CRASH_MESSAGE``, or the time-limit message if it was killed);
    if it touched several, they are rerun one per eval, which pins the culprit on the next
    crash. After ``MAX_CRASHES_IN_A_ROW`` crashes with no query finished in between, or
    ``MAX_CRASHES`` in one batch, the queries left become errors with the same message. Each
    step of a batch is bounded, which is the watchdog.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import TypeVar

from app.sandbox.limits import Limits, time_message
from app.sandbox.process import PoolSettings, WorkerLost, WorkerProcess
from app.sandbox.protocol import Request
from app.sandbox.queries import config_problem, encode_queries, merge
from app.sandbox.types import JsQuery, JsResult, JsScorer, js_error

__all__ = [
    "CRASH_MESSAGE",
    "MAX_CRASHES_IN_A_ROW",
    "WORKER_MESSAGE",
    "JsPool",
    "current_pool",
    "in_scoring_thread",
    "install_pool",
    "score_javascript",
]

MAX_CRASHES_IN_A_ROW = 3
MAX_CRASHES = 10
CRASH_MESSAGE = "scorer crashed the JavaScript engine (out of memory)"
WORKER_MESSAGE = "scorer failed: the JavaScript worker process could not start"
GAVE_UP = "; the remaining queries were not run after {count} crashes"

T = TypeVar("T")


class JsPool:
    """Up to ``settings.workers`` worker processes; each batch has one to itself.

    Fair between owners of work (users): one holds at most ``workers - 1`` workers at once,
    so another's batch always finds one within a batch's time, however many runaway batches
    the first has queued. Close it when done (or use it as a context manager).
    """

    def __init__(self, settings: PoolSettings | None = None) -> None:
        self.settings = settings or PoolSettings()
        self.started = 0  # worker processes started so far (restarts included)
        self._reset()
        _LIVE.add(self)

    def _reset(self) -> None:
        self.lock = threading.Condition()
        self.idle: list[WorkerProcess] = []
        self.workers: list[WorkerProcess] = []
        self.held: dict[object, int] = {}
        # Per owner, how many batches (or mappers) had to wait for a worker: what fairness
        # between owners is about.
        self.waited: dict[object, int] = {}
        # Threads that may wait for a worker: many (a waiting thread costs little) and apart
        # from the event loop's default executor, which database work uses.
        self.threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="relevo-scoring")

    def __enter__(self) -> JsPool:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _count_start(self, _pid: int) -> None:
        with self.lock:
            self.started += 1

    def _acquire(self, owner: object = None) -> WorkerProcess:
        most = self.settings.workers
        cap = max(1, most - 1)
        with self.lock:
            waits = False
            while self.held.get(owner, 0) >= cap or (not self.idle and len(self.workers) >= most):
                waits = True
                self.lock.wait()
            if waits:
                self.waited[owner] = self.waited.get(owner, 0) + 1
            self.held[owner] = self.held.get(owner, 0) + 1
            if self.idle:
                return self.idle.pop()
            worker = WorkerProcess(self.settings, self._count_start)
            self.workers.append(worker)
            return worker

    def _release(self, worker: WorkerProcess, owner: object = None) -> None:
        with self.lock:
            self.idle.append(worker)
            left = self.held.get(owner, 0) - 1
            if left > 0:
                self.held[owner] = left
            else:
                self.held.pop(owner, None)
            self.lock.notify_all()  # waiters of several owners: each checks its own cap

    def score(
        self,
        scorer: JsScorer,
        queries: Sequence[JsQuery],
        limits: Limits | None = None,
        owner: object = None,
    ) -> list[JsResult]:
        """Return the results of a JavaScript scorer over a batch, computed in a worker.

        ``owner`` (a user id; None for no one in particular) is what the pool shares fairly.
        """
        problem = config_problem(scorer)
        if problem is not None:
            return [js_error(problem) for _ in range(len(queries))]
        outcomes, parts = encode_queries(queries)
        if not parts:
            return merge(outcomes, [])
        worker = self._acquire(owner)
        try:
            results = _score_parts(
                worker,
                scorer.code,
                tuple(scorer.scale),
                scorer.max_score,
                parts,
                limits or Limits(),
                scorer.environment,
            )
        finally:
            self._release(worker, owner)
        return merge(outcomes, results)

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Return work() computed in one of the pool's threads (never a database thread)."""
        return await asyncio.get_running_loop().run_in_executor(self.threads, work)

    def pids(self) -> list[int]:
        """Return the pids of the running workers."""
        with self.lock:
            return [pid for pid in (w.pid for w in self.workers) if pid is not None]

    def close(self) -> None:
        """Stop every worker (EOF, then a kill after a second); later batches start new ones."""
        with self.lock:
            workers = list(self.workers)
        for worker in workers:
            worker.stop(wait=1.0)

    def forget(self) -> None:
        """In a forked child: drop the parent's workers without touching them."""
        for worker in self.workers:
            worker.forget()
        self._reset()  # a fresh lock: another thread may have held the old one at the fork


# Pools alive in this process, so that a forked child forgets their workers.
_LIVE: weakref.WeakSet[JsPool] = weakref.WeakSet()


def _forget_after_fork() -> None:
    for pool in list(_LIVE):
        pool.forget()


os.register_at_fork(after_in_child=_forget_after_fork)

_installed: JsPool | None = None


def install_pool(pool: JsPool | None) -> JsPool | None:
    """Make ``pool`` the one scoring uses (None: none); return the one it replaces."""
    global _installed
    previous, _installed = _installed, pool
    return previous


def current_pool() -> JsPool | None:
    """Return the pool scoring uses, if its owner installed one."""
    return _installed


def score_javascript(
    scorer: JsScorer,
    queries: Sequence[JsQuery],
    limits: Limits | None = None,
    owner: object = None,
) -> list[JsResult]:
    """Score a batch in the installed pool, or in a pool of its own for this one call."""
    pool = _installed
    if pool is not None:
        return pool.score(scorer, queries, limits, owner)
    with JsPool() as own:
        return own.score(scorer, queries, limits, owner)


async def in_scoring_thread(work: Callable[[], T]) -> T:
    """Return work() computed in the installed pool's threads (never a database thread)."""
    pool = _installed
    if pool is None:
        return await asyncio.to_thread(work)
    return await pool.in_thread(work)


def _score_parts(
    worker: WorkerProcess,
    code: str,
    scale: tuple[float, ...],
    max_score: float,
    parts: list[str],
    limits: Limits,
    environment: str = "relevo",
) -> list[JsResult]:
    """Return the results of encoded queries, replacing the worker when a query kills it."""
    outcomes: list[JsResult] = []
    single_until = 0
    crashes = in_a_row = 0

    def receive(batch: list[JsResult]) -> None:
        nonlocal in_a_row
        if batch:
            outcomes.extend(batch)
            in_a_row = 0

    while len(outcomes) < len(parts):
        start = len(outcomes)
        request: Request = (
            code, scale, max_score, parts[start:], max(0, single_until - start),
            limits.time_s, limits.heap_bytes, limits.max_timeouts_in_a_row, environment,
        )  # fmt: skip
        try:
            worker.run(pickle.dumps(request, pickle.HIGHEST_PROTOCOL), receive)
            if len(outcomes) == start:  # a batch that ends without progress: never loop
                outcomes.extend(js_error("not scored") for _ in range(len(parts) - start))
        except WorkerLost as lost:
            crashes += 1
            in_a_row += 1
            if lost.step is None:  # lost before it began the batch: not the scorer's doing
                message = WORKER_MESSAGE
            elif lost.stalled:
                message = time_message(limits.time_s)
            else:
                message = CRASH_MESSAGE
            first, count = lost.step if lost.step is not None else (-1, 0)
            if start + first != len(outcomes):
                count = 0  # the frames do not add up: blame no query in particular
            if count == 1:
                outcomes.append(js_error(message))
            elif count > 1:
                single_until = len(outcomes) + count
            if in_a_row >= MAX_CRASHES_IN_A_ROW or crashes >= MAX_CRASHES:
                rest = message + GAVE_UP.format(count=crashes)
                outcomes.extend(js_error(rest) for _ in range(len(parts) - len(outcomes)))
    del outcomes[len(parts) :]
    return outcomes
