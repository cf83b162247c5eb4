"""The pool of JavaScript worker processes, owned by whoever runs scoring.

A few huge allocations (``new Array(2**28).fill(0)``, ``"x".repeat(2**28).split("")``) make
V8 abort its whole process; mini-racer's heap limit does not catch them. So the parent never
runs user code: a pool hands the encoded queries to a worker process (``worker.main``),
which scores them with the in-process engine of ``app.scoring.javascript``.

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
    that takes longer (V8 does not interrupt some long built-ins such as a huge ``fill``) is
    killed. A worker that dies or is killed is replaced and the batch goes on from the first
    unfinished query (one lost before its first frame is ``WORKER_MESSAGE``, not the
    scorer's fault): if the fatal eval touched a single query, that query is an error
    (``CRASH_MESSAGE``, or the time-limit message if it was killed); if it touched several,
    they are rerun one per eval, which pins the culprit on the next crash. After
    ``MAX_CRASHES_IN_A_ROW`` crashes with no query finished in between, or ``MAX_CRASHES`` in
    one batch, the queries left become errors with the same message. Each step of a batch is
    bounded, which is the watchdog.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import IO, TypeVar

from app.scoring.js_limits import Limits, time_message
from app.scoring.js_queries import config_problem, encode_queries, merge
from app.scoring.sandbox.protocol import (
    COMMAND,
    HEADER,
    MAX_FRAME,
    Request,
    outcome_from_row,
    worker_environment,
)
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed

__all__ = [
    "CRASH_MESSAGE",
    "MAX_CRASHES_IN_A_ROW",
    "WORKER_MESSAGE",
    "JsPool",
    "PoolSettings",
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

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class PoolSettings:
    """How a pool runs its workers."""

    # At least two, so that one user's batches (at most workers - 1 at once) never hold all.
    workers: int = max(2, min(4, os.cpu_count() or 1))
    # How long past a step's announced duration a worker may stay silent before it is killed.
    grace_s: float = 1.0
    start_s: float = 30.0  # a new worker's first frame: interpreter start, imports, request
    request_s: float = 10.0  # a running worker's first frame: reading the request
    # A worker process's data (heap, typed arrays' backing stores, malloc) is capped here:
    # far above one isolate's heap limit, far below what starves the server.
    memory_bytes: int = 1024 * 1024 * 1024
    # The worker's command line; None: this interpreter running worker.main.
    command: tuple[str, ...] | None = None

    def command_line(self) -> list[str]:
        """Return the command that starts a worker."""
        return list(self.command) if self.command else [sys.executable, "-c", COMMAND]


class _WorkerLost(Exception):
    """The worker died, stopped answering or sent garbage; it has been killed."""

    def __init__(self, step: tuple[int, int] | None, *, stalled: bool) -> None:
        super().__init__("the JavaScript worker was lost")
        self.step = step
        self.stalled = stalled


class _Worker:
    """One child process, started on demand and restarted after it is lost."""

    def __init__(self, settings: PoolSettings, on_start: Callable[[int], None]) -> None:
        self.settings = settings
        self.on_start = on_start
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: IO[bytes] | None = None
        self.buffer = bytearray()
        self.poll_in = select.poll()
        self.poll_out = select.poll()

    @property
    def pid(self) -> int | None:
        """Return the child's pid while it runs."""
        proc = self.proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _start(self) -> subprocess.Popen[bytes]:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the child
        proc = subprocess.Popen(
            self.settings.command_line(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=worker_environment(os.environ, self.settings.memory_bytes),
            close_fds=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        self.poll_in = select.poll()
        self.poll_in.register(proc.stdout.fileno(), select.POLLIN)
        self.poll_out = select.poll()
        self.poll_out.register(proc.stdin.fileno(), select.POLLOUT)
        self.buffer = bytearray()
        self.proc = proc
        self.on_start(proc.pid)
        return proc

    def run(self, request: bytes, receive: Callable[[list[Outcome]], None]) -> None:
        """Send one request and pass the outcomes on as they come; raise _WorkerLost."""
        proc = self.proc
        fresh = proc is None or proc.poll() is not None
        step: tuple[int, int] | None = None
        if fresh:
            self.stop()
            try:
                proc = self._start()
            except OSError as exc:
                logger.warning("cannot start a JavaScript worker: %s", exc)
                self.stop()
                raise _WorkerLost(None, stalled=False) from exc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + (self.settings.start_s if fresh else self.settings.request_s)
        try:
            self._send(proc.stdin.fileno(), HEADER.pack(len(request)) + request, deadline)
            while True:
                frame = self._receive(proc.stdout.fileno(), deadline)
                rows, announced = json.loads(frame)
                receive([outcome_from_row(row) for row in rows])
                if announced is None:
                    return
                first, count, seconds = announced
                step = (int(first), int(count))
                deadline = time.monotonic() + min(float(seconds), 3600.0) + self.settings.grace_s
        except TimeoutError:
            self._lose(step, stalled=True)
        except (OSError, EOFError, ValueError, TypeError):
            self._lose(step, stalled=False)
        except BaseException:
            self.stop()  # interrupted mid-batch: the protocol state is unknown
            raise

    def _send(self, fd: int, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self.poll_out, deadline)
            with contextlib.suppress(BlockingIOError):
                view = view[os.write(fd, view) :]

    def _receive(self, fd: int, deadline: float) -> bytes:
        buffer = self.buffer
        while True:
            if len(buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(buffer)
                if size > MAX_FRAME:
                    raise ValueError("oversized frame")
                end = HEADER.size + size
                if len(buffer) >= end:
                    frame = bytes(buffer[HEADER.size : end])
                    del buffer[:end]
                    return frame
            self._wait(self.poll_in, deadline)
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError("the worker closed its output")
            buffer += chunk

    @staticmethod
    def _wait(poller: select.poll, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining > 0 and poller.poll(int(remaining * 1000) + 1):
            return
        if time.monotonic() >= deadline:
            raise TimeoutError

    def _lose(self, step: tuple[int, int] | None, *, stalled: bool) -> None:
        proc = self.proc
        if proc is not None:
            if stalled:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            how = "stopped answering and was killed" if stalled else "died"
            how += f" (exit status {proc.returncode})"
            logger.warning("JavaScript worker %s %s%s", proc.pid, how, self._fatal_line())
        self.stop()
        raise _WorkerLost(step, stalled=stalled)

    def _fatal_line(self) -> str:
        if self.stderr is None:
            return ""
        try:
            self.stderr.seek(max(0, self.stderr.seek(0, os.SEEK_END) - 65536))
            tail = self.stderr.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = tail.splitlines()
        fatal = [line for line in lines if line.startswith("# Fatal")]
        errors = fatal or [line for line in lines if "Error" in line and line[:1].isalpha()]
        return f": {errors[-1].strip('# ')}" if errors else ""

    def stop(self, wait: float = 0.0) -> None:
        """End the child (EOF, then a kill after ``wait`` seconds) and reap it."""
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            if wait > 0:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(wait)
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    def forget(self) -> None:
        """Drop the child without touching it (in a forked copy of the parent)."""
        proc, self.proc = self.proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            proc.returncode = 0  # not our child: never wait for it
        self.stderr = None


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
        self.idle: list[_Worker] = []
        self.workers: list[_Worker] = []
        self.held: dict[object, int] = {}
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

    def _acquire(self, owner: object = None) -> _Worker:
        most = self.settings.workers
        cap = max(1, most - 1)
        with self.lock:
            while self.held.get(owner, 0) >= cap or (not self.idle and len(self.workers) >= most):
                self.lock.wait()
            self.held[owner] = self.held.get(owner, 0) + 1
            if self.idle:
                return self.idle.pop()
            worker = _Worker(self.settings, self._count_start)
            self.workers.append(worker)
            return worker

    def _release(self, worker: _Worker, owner: object = None) -> None:
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
        config: ScorerConfig,
        queries: Sequence[QueryInput],
        limits: Limits | None = None,
        owner: object = None,
    ) -> list[Outcome]:
        """Return the outcomes of a JavaScript scorer over a batch, computed in a worker.

        ``owner`` (a user id; None for no one in particular) is what the pool shares fairly.
        """
        problem = config_problem(config)
        if problem is not None:
            return [failed(problem) for _ in queries]
        outcomes, parts = encode_queries(queries)
        if not parts:
            return merge(outcomes, [])
        worker = self._acquire(owner)
        try:
            results = _score_parts(
                worker,
                config.code or "",
                tuple(config.scale),
                config.max_score,
                parts,
                limits or Limits(),
                config.environment,
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
    config: ScorerConfig,
    queries: Sequence[QueryInput],
    limits: Limits | None = None,
    owner: object = None,
) -> list[Outcome]:
    """Score a batch in the installed pool, or in a pool of its own for this one call."""
    pool = _installed
    if pool is not None:
        return pool.score(config, queries, limits, owner)
    with JsPool() as own:
        return own.score(config, queries, limits, owner)


async def in_scoring_thread(work: Callable[[], T]) -> T:
    """Return work() computed in the installed pool's threads (never a database thread)."""
    pool = _installed
    if pool is None:
        return await asyncio.to_thread(work)
    return await pool.in_thread(work)


def _score_parts(
    worker: _Worker,
    code: str,
    scale: tuple[float, ...],
    max_score: float,
    parts: list[str],
    limits: Limits,
    environment: str = "relevo",
) -> list[Outcome]:
    """Return the outcomes of encoded queries, replacing the worker when a query kills it."""
    outcomes: list[Outcome] = []
    single_until = 0
    crashes = in_a_row = 0

    def receive(batch: list[Outcome]) -> None:
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
                outcomes.extend(failed("not scored") for _ in range(len(parts) - start))
        except _WorkerLost as lost:
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
                outcomes.append(failed(message))
            elif count > 1:
                single_until = len(outcomes) + count
            if in_a_row >= MAX_CRASHES_IN_A_ROW or crashes >= MAX_CRASHES:
                rest = message + GAVE_UP.format(count=crashes)
                outcomes.extend(failed(rest) for _ in range(len(parts) - len(outcomes)))
    del outcomes[len(parts) :]
    return outcomes
