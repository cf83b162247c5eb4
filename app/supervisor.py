"""Worker processes tied to the `relevo serve` that started them.

``serve`` runs its workers under a ``WorkerSupervisor``: a thread that starts them, starts
again any that exits while the server runs (after a back-off that doubles from
``RESTART_FIRST_S`` to ``RESTART_MAX_S``, and starts afresh once a worker has stayed up
``STEADY_S``), and stops them with one SIGTERM each when the server stops.

A worker must not outlive its server, however the server ends (a SIGKILL runs no code of
the server's). So each worker is started with ``--parent-pid`` and calls
``exit_with_parent``: on Linux the kernel sends it SIGTERM when the thread that started it
ends (``PR_SET_PDEATHSIG``), which is why one long-lived thread starts every worker and
stops them before it ends; on every system a thread of the worker watches ``os.getppid()``
and stops the worker when its parent is gone. A worker's JavaScript processes end with it:
they exit when their standard input reaches EOF.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "RESTART_FIRST_S",
    "RESTART_MAX_S",
    "STEADY_S",
    "WorkerSupervisor",
    "describe_exit",
    "exit_with_parent",
]

log = logging.getLogger(__name__)

RESTART_FIRST_S = 1.0
RESTART_MAX_S = 30.0
# A worker that stayed up this long before it exited is restarted after RESTART_FIRST_S.
STEADY_S = 60.0
LOOK_S = 0.2  # how often the supervisor looks at its workers
STOP_S = 20.0  # a stopping worker gets this long (its chunks get 10 s), then it is killed
WATCH_S = 0.5  # how often a worker looks whether its parent is still there
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def describe_exit(returncode: int) -> str:
    """Return how a process ended, from its Popen return code."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"was killed by signal {name}"
    return f"exited with code {returncode}"


@dataclass
class _Slot:
    """One of the server's workers: its current process and its restart back-off."""

    number: int
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    delay_s: float = RESTART_FIRST_S
    restart_at: float | None = None


class WorkerSupervisor:
    """Keeps ``count`` processes running ``command`` until ``stop``; restarts those that exit."""

    def __init__(
        self,
        command: Sequence[str],
        count: int,
        *,
        first_delay_s: float = RESTART_FIRST_S,
        max_delay_s: float = RESTART_MAX_S,
        steady_s: float = STEADY_S,
    ) -> None:
        self.command = list(command)
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.steady_s = steady_s
        self._slots = [_Slot(n, delay_s=first_delay_s) for n in range(1, count + 1)]
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relevo-workers", daemon=True)

    def start(self, timeout_s: float = 30.0) -> None:
        """Start the workers (from the supervisor's thread) and return once they are."""
        self._thread.start()
        self._started.wait(timeout_s)

    def pids(self) -> list[int]:
        """Return the pids of the workers running now."""
        return [
            slot.process.pid
            for slot in self._slots
            if slot.process is not None and slot.process.poll() is None
        ]

    def stop(self) -> None:
        """Stop every worker (SIGTERM, SIGKILL after ``STOP_S``) and the supervisor."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            for slot in self._slots:
                self._spawn(slot, time.monotonic())
            self._started.set()
            while not self._stopping.wait(LOOK_S):
                now = time.monotonic()
                for slot in self._slots:
                    self._look_after(slot, now)
        finally:
            self._started.set()
            # Here, not in the thread that calls stop(): the workers' parent-death signal
            # follows this thread, and it must not send a second SIGTERM.
            self._stop_all()

    def _spawn(self, slot: _Slot, now: float) -> None:
        slot.restart_at = None
        try:
            # A session of its own: a Ctrl-C at the terminal reaches the server, which then
            # sends each worker one SIGTERM (a second signal would stop it at once).
            process = subprocess.Popen(self.command, start_new_session=True)
        except OSError as exc:
            log.error("cannot start worker %d: %s", slot.number, exc)
            self._back_off(slot, now)
            return
        slot.process, slot.started_at = process, now
        log.info("started worker %d (pid %d)", slot.number, process.pid)

    def _look_after(self, slot: _Slot, now: float) -> None:
        process = slot.process
        if process is None:
            if slot.restart_at is not None and now >= slot.restart_at:
                self._spawn(slot, now)
            return
        returncode = process.poll()
        if returncode is None:
            return
        slot.process = None
        up_s = now - slot.started_at
        if up_s >= self.steady_s:
            slot.delay_s = self.first_delay_s
        log.warning(
            "worker %d (pid %d) %s after %.0f s; restarting it in %g s",
            slot.number,
            process.pid,
            describe_exit(returncode),
            up_s,
            slot.delay_s,
        )
        self._back_off(slot, now)

    def _back_off(self, slot: _Slot, now: float) -> None:
        slot.restart_at = now + slot.delay_s
        slot.delay_s = min(slot.delay_s * 2, self.max_delay_s)

    def _stop_all(self) -> None:
        running = [slot.process for slot in self._slots if slot.process is not None]
        for process in running:
            if process.poll() is None:
                log.info("stopping worker (pid %d)", process.pid)
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_S
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker (pid %d) did not stop within %g s: killed", process.pid, STOP_S)
                process.kill()
                process.wait()
        for slot in self._slots:
            slot.process = None


def exit_with_parent(parent_pid: int, *, grace_s: float) -> None:
    """Make this process stop when ``parent_pid``, its parent, ends.

    SIGTERM starts the orderly stop (the kernel's parent-death signal on Linux, else the
    watching thread's); if the process still runs ``grace_s`` after the parent went, it exits.
    """
    by_kernel = _parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent_pid:  # gone already (before the signal was armed)
        print(f"The parent process {parent_pid} is gone: not starting.", file=sys.stderr)
        raise SystemExit(1)
    watcher = threading.Thread(
        target=_watch_parent,
        args=(parent_pid, by_kernel, grace_s),
        name="parent-watch",
        daemon=True,
    )
    watcher.start()


def _parent_death_signal(signum: int) -> bool:
    """Ask Linux to send ``signum`` when the parent ends; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int, signalled_by_kernel: bool, grace_s: float) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCH_S)
    log.warning("the parent process %d is gone: stopping", parent_pid)
    if not signalled_by_kernel:  # else the kernel sent SIGTERM; a second one would kill
        os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    log.error("still running %g s after the parent process ended: exiting", grace_s)
    os._exit(1)
