"""Process-wide settings of the Python runtime, applied once by each entry point."""

from __future__ import annotations

import gc

__all__ = ["GC_THRESHOLDS", "tune_gc"]

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
