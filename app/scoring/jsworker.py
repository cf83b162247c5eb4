"""Runs JavaScript scorers in worker processes, so that a scorer that kills V8 kills only those.

A few huge allocations (``new Array(2**28).fill(0)``, ``"x".repeat(2**28).split("")``) make
V8 abort its whole process; mini-racer's heap limit does not catch them. So the parent never
runs user code: ``score_javascript`` hands the encoded queries to a worker, a child process
running ``main`` in a fresh interpreter (``_COMMAND``), which scores them with the in-process
engine of ``app.scoring.javascript`` (one isolate per batch, as before).

Processes and threads
    Workers are started lazily, on the first JavaScript batch, with ``subprocess`` (a fresh
    interpreter: no fork of a threaded parent) and then kept for later calls. A pool holds at
    most ``JS_WORKERS`` of them; each call takes one for its whole batch (a new one if none is
    idle and the pool is not full, else it waits), so calls from several threads run side by
    side. A worker exits when its stdin reaches EOF, which also happens when the parent dies;
    at interpreter exit ``atexit`` closes them (EOF, then kill after a short wait), and a
    forked child of the parent forgets the parent's workers.

Protocol
    Parent to worker: one request per batch, an 8-byte length then a pickle of (code, scale,
    max_score, encoded queries, how many of the first ones to run one per eval, time limit,
    heap limit). Worker to parent: frames of the same shape holding JSON (not pickle: the
    worker runs untrusted code, the parent does not unpickle what it sends) of
    ``[outcomes, step]``. The worker sends one frame before each eval with the outcomes
    finished since the previous frame and ``step = [first unfinished query, how many
    queries the eval may touch (0: none in particular), its longest duration]``, and a last
    frame with ``step = null``. Limits are sent with each request, so they are read from
    ``app.scoring.javascript`` at call time.

Crashes and hangs
    The parent waits for each frame at most the announced duration plus ``GRACE_S``; a worker
    that takes longer (V8 does not interrupt some long built-ins such as a huge ``fill``) is
    killed. A worker that dies or is killed is replaced and the batch goes on from the first
    unfinished query (one lost before its first frame is ``WORKER_MESSAGE``, not the
    scorer's fault): if the fatal eval touched a single query, that query is an error
    (``CRASH_MESSAGE``, or the time-limit message if it was killed); if it touched several,
    they are rerun one per eval, which pins the culprit on the next crash. The others score
    normally. After ``MAX_CRASHES_IN_A_ROW`` crashes with no query finished in between, or
    ``MAX_CRASHES`` in one batch, the queries left become errors with the same message. So a
    batch takes at most about (queries x time limit) plus (``MAX_CRASHES`` x (announced
    duration + ``GRACE_S`` + a restart)); each step of a batch is bounded, which is the
    watchdog.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

from app.scoring import javascript
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed

JS_WORKERS = max(1, min(4, os.cpu_count() or 1))
GRACE_S = 1.0
START_S = 30.0  # a new worker's first frame: interpreter start, imports, request
REQUEST_S = 10.0  # a running worker's first frame: reading the request
MAX_CRASHES_IN_A_ROW = 3
MAX_CRASHES = 10
CRASH_MESSAGE = "scorer crashed the JavaScript engine (out of memory)"
WORKER_MESSAGE = "scorer failed: the JavaScript worker process could not start"
GAVE_UP = "; the remaining queries were not run after {count} crashes"
_MAX_FRAME = 1 << 31
_HEADER = struct.Struct("<Q")
_ROOT = str(Path(__file__).resolve().parents[2])
_STATUSES = frozenset(("scored", "unscored", "error"))
# Not "-m app.scoring.jsworker": the package imports this module, which would then run twice.
_COMMAND = "from app.scoring.jsworker import main; main()"

logger = logging.getLogger(__name__)

Request = tuple[str, tuple[float, ...], float, list[str], int, float, int]


# What a worker inherits of the parent's environment: nothing secret (no DATABASE_URL, no
# RELEVO_SECRET_KEY, no cloud credentials), only what an interpreter needs to start.
_INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
MEMORY_ENV = "RELEVO_JS_WORKER_MEMORY_BYTES"
# A worker process's data (heap, typed arrays' backing stores, malloc) is capped here: far
# above one isolate's heap limit, far below what starves the server.
WORKER_MEMORY_BYTES = 1024 * 1024 * 1024


def worker_environment(parent: Mapping[str, str]) -> dict[str, str]:
    """Return the environment of a worker process, built from the parent's."""
    env = {name: parent[name] for name in _INHERITED if name in parent}
    env["PYTHONPATH"] = _ROOT
    env[MEMORY_ENV] = str(WORKER_MEMORY_BYTES)
    return env


def _cap_memory(environ: Mapping[str, str]) -> None:
    """In the worker: cap the process's data segment (RLIMIT_DATA) as the parent asked."""
    raw = environ.get(MEMORY_ENV, "")
    if raw.isdigit():
        limit = int(raw)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


class _WorkerLost(Exception):
    """The worker died, stopped answering or sent garbage; it has been killed."""

    def __init__(self, step: tuple[int, int] | None, *, stalled: bool) -> None:
        super().__init__("the JavaScript worker was lost")
        self.step = step
        self.stalled = stalled


def _outcome(row: Any) -> Outcome:
    """Return the outcome a worker sent, checking its shape (the worker is not trusted)."""
    status, score, raw, reason, log = row
    ok = (
        status in _STATUSES
        and (score is None or type(score) in (float, int))
        and (raw is None or type(raw) in (float, int))
        and (reason is None or type(reason) is str)
        and type(log) is list
        and all(type(line) is str for line in log)
    )
    if not ok:
        raise ValueError("malformed outcome")
    return Outcome(status, score, raw, reason, tuple(log))


def _row(outcome: Outcome) -> list[Any]:
    return [outcome.status, outcome.score, outcome.raw_score, outcome.reason, list(outcome.log)]


class _Worker:
    """One child process, started on demand and restarted after it is lost."""

    def __init__(self) -> None:
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
        env = worker_environment(os.environ)
        proc = subprocess.Popen(
            [sys.executable, "-c", _COMMAND],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
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
        deadline = time.monotonic() + (START_S if fresh else REQUEST_S)
        try:
            self._send(proc.stdin.fileno(), _HEADER.pack(len(request)) + request, deadline)
            while True:
                frame = self._receive(proc.stdout.fileno(), deadline)
                rows, announced = json.loads(frame)
                receive([_outcome(row) for row in rows])
                if announced is None:
                    return
                first, count, seconds = announced
                step = (int(first), int(count))
                deadline = time.monotonic() + min(float(seconds), 3600.0) + GRACE_S
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
            if len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if size > _MAX_FRAME:
                    raise ValueError("oversized frame")
                end = _HEADER.size + size
                if len(buffer) >= end:
                    frame = bytes(buffer[_HEADER.size : end])
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


class _Pool:
    """Up to JS_WORKERS workers; each batch has one to itself."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.idle: list[_Worker] = []
        self.workers: list[_Worker] = []

    def _reset(self) -> None:
        self.lock = threading.Condition()
        self.idle = []
        self.workers = []

    def acquire(self) -> _Worker:
        with self.lock:
            while not self.idle and len(self.workers) >= JS_WORKERS:
                self.lock.wait()
            if self.idle:
                return self.idle.pop()
            worker = _Worker()
            self.workers.append(worker)
            return worker

    def release(self, worker: _Worker) -> None:
        with self.lock:
            self.idle.append(worker)
            self.lock.notify()

    def pids(self) -> list[int]:
        with self.lock:
            return [pid for pid in (w.pid for w in self.workers) if pid is not None]

    def close(self) -> None:
        with self.lock:
            workers = list(self.workers)
        for worker in workers:
            worker.stop(wait=1.0)

    def forget(self) -> None:
        for worker in self.workers:
            worker.forget()
        self._reset()  # a fresh lock: another thread may have held the old one at the fork


_POOL = _Pool()
atexit.register(_POOL.close)
os.register_at_fork(after_in_child=_POOL.forget)


def _score_parts(
    worker: _Worker, code: str, scale: tuple[float, ...], max_score: float, parts: list[str]
) -> list[Outcome]:
    """Return the outcomes of encoded queries, replacing the worker when a query kills it."""
    limits = (javascript.JS_TIME_LIMIT_S, javascript.JS_HEAP_LIMIT_BYTES)
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
            code, scale, max_score, parts[start:], max(0, single_until - start), *limits
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
                message = javascript.time_message(limits[0])
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


def score_javascript(config: ScorerConfig, queries: Sequence[QueryInput]) -> list[Outcome]:
    """Return the outcomes of a JavaScript scorer over a batch, computed in a worker process."""
    problem = javascript.config_problem(config)
    if problem is not None:
        return [failed(problem) for _ in queries]
    outcomes, parts = javascript.encode_queries(queries)
    if not parts:
        return javascript.merge(outcomes, [])
    worker = _POOL.acquire()
    try:
        results = _score_parts(
            worker, config.code or "", tuple(config.scale), config.max_score, parts
        )
    finally:
        _POOL.release(worker)
    return javascript.merge(outcomes, results)


def worker_pids() -> list[int]:
    """Return the pids of the running JavaScript workers."""
    return _POOL.pids()


def close_workers() -> None:
    """Stop every JavaScript worker; later batches start new ones."""
    _POOL.close()


def _serve(requests: BinaryIO, frames: BinaryIO) -> None:
    """Answer requests until the parent closes the pipe."""

    def send(done: Sequence[Outcome], step: list[Any] | None) -> None:
        data = json.dumps([[_row(o) for o in done], step], separators=(",", ":")).encode()
        frames.write(_HEADER.pack(len(data)) + data)
        frames.flush()

    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        payload = requests.read(size)
        if len(payload) < size:
            return
        request: Request = pickle.loads(payload)
        code, scale, max_score, parts, single_until, time_limit, heap_limit = request
        sent = 0

        def step(done: Sequence[Outcome], count: int, seconds: float) -> None:
            nonlocal sent
            sent += len(done)
            send(done, [sent, count, seconds])

        results = javascript.run_batch(
            code,
            scale,
            max_score,
            parts,
            limits=(time_limit, heap_limit),
            single_until=single_until,
            step=step,
        )
        send(results[sent:], None)


def main() -> None:
    """Serve the parent on stdin/stdout; stray writes to stdout go to stderr instead."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    _cap_memory(os.environ)
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    with contextlib.suppress(BrokenPipeError):
        _serve(sys.stdin.buffer, frames)


if __name__ == "__main__":
    main()
