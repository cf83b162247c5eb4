"""Process-wide settings of the Python runtime, applied once by each entry point."""

from __future__ import annotations

import gc
import signal
from collections.abc import Callable
from types import FrameType

__all__ = ["GC_THRESHOLDS", "serve_until_stopped", "tune_gc"]

# Python's cycle collector runs every 700 new container objects by default, and each
# older-generation pass walks every live object. Relevo builds hundreds of thousands of
# small, acyclic objects at once (a run's docs, a comparison of two 10,000-query runs) while
# holding large heaps, so the default made comparing two such runs spend half its time in
# the collector. Collecting every 50,000 allocations keeps the same guarantees for cyclic
# garbage at a fraction of the cost (measured: compare 2.2 s → 1.2 s).
GC_THRESHOLDS = (50_000, 20, 100)


def tune_gc() -> None:
    """Set the collector's thresholds for Relevo's allocation pattern."""
    gc.set_threshold(*GC_THRESHOLDS)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _Stop(BaseException):
    """SIGTERM or SIGINT reached a serving process."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def serve_until_stopped(serve: Callable[[], None], *, cleanup: Callable[[], None]) -> None:
    """Run ``serve`` (uvicorn), then always ``cleanup``, whatever signal stopped it.

    uvicorn stops on SIGTERM and SIGINT, then raises the signal again, which would end the
    process before any ``finally`` of the caller: here the signal becomes an exception, the
    cleanup runs with both signals ignored (a second Ctrl-C cannot cut it short), and the
    process then ends by that signal, as it would have without this.
    """
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    caught: int | None = None
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, _raise_stop)
        serve()
    except _Stop as stop:
        caught = stop.signum
    finally:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        try:
            cleanup()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if caught is not None:
        signal.signal(caught, signal.SIG_DFL)
        signal.raise_signal(caught)
