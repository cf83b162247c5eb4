"""One worker process seen from the parent: start it, send it a request, read its frames.

A worker starts on demand and is started again after it is lost. The parent waits for each
frame at most the duration the previous frame announced plus ``grace_s`` (the watchdog: V8
does not interrupt some long built-ins such as a huge ``fill``); a worker that takes longer
is killed, one that dies or sends garbage is reaped, and either way ``WorkerLost`` says
which step of the batch it was in. The last fatal line of its stderr goes to the log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from app.sandbox.protocol import (
    COMMAND,
    HEADER,
    MAX_FRAME,
    result_from_row,
    worker_environment,
)
from app.sandbox.types import JsResult

__all__ = ["PoolSettings", "WorkerLost", "WorkerProcess"]

logger = logging.getLogger(__name__)


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


class WorkerLost(Exception):
    """The worker died, stopped answering or sent garbage; it has been killed."""

    def __init__(self, step: tuple[int, int] | None, *, stalled: bool) -> None:
        super().__init__("the JavaScript worker was lost")
        self.step = step
        self.stalled = stalled


class WorkerProcess:
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

    def run(self, request: bytes, receive: Callable[[list[JsResult]], None]) -> None:
        """Send one request and pass the results on as they come; raise WorkerLost."""
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
                raise WorkerLost(None, stalled=False) from exc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + (self.settings.start_s if fresh else self.settings.request_s)
        try:
            self._send(proc.stdin.fileno(), HEADER.pack(len(request)) + request, deadline)
            while True:
                frame = self._receive(proc.stdout.fileno(), deadline)
                rows, announced = json.loads(frame)
                receive([result_from_row(row) for row in rows])
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
        raise WorkerLost(step, stalled=stalled)

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
