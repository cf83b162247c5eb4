"""The one thread of a process that creates and closes its V8 contexts.

V8 aborts ("Check failed: !IsConfigurablePoolInitialized()") or crashes the process when
several threads create their first contexts at once, and a lock is not enough: contexts
created or closed one at a time, but by different threads that all existed before V8
started, crash it too. So one thread creates and closes them all; any thread may use them.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from py_mini_racer import MiniRacer

__all__ = ["close_racer", "new_racer"]


class _Creator:
    """The one thread of a process that creates its V8 contexts (see the module docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = 0
        self.executor: ThreadPoolExecutor | None = None

    def _executor(self) -> ThreadPoolExecutor:
        with self.lock:
            if self.executor is None or self.pid != os.getpid():  # a forked child: a new one
                self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="relevo-v8")
                self.pid = os.getpid()
            return self.executor

    def new_racer(self) -> MiniRacer:
        """Return a new V8 context, created on this process's V8 thread."""
        return self._executor().submit(MiniRacer).result()

    def close(self, racer: MiniRacer) -> None:
        """Close a context on this process's V8 thread."""
        self._executor().submit(racer.close).result()


_CREATOR = _Creator()
_new_racer = _CREATOR.new_racer
_close_racer = _CREATOR.close


_CREATOR = _Creator()
new_racer = _CREATOR.new_racer
close_racer = _CREATOR.close
