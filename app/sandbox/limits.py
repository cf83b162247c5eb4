"""What a JavaScript scorer's batch may use, and the reasons of queries that overran it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "JS_HEAP_LIMIT_BYTES",
    "JS_MAX_TIMEOUTS_IN_A_ROW",
    "JS_SLICE_S",
    "JS_TIME_LIMIT_S",
    "SETUP_TIMEOUT_S",
    "Limits",
    "memory_message",
    "stopped_message",
    "time_message",
]

JS_TIME_LIMIT_S = 1.0
JS_HEAP_LIMIT_BYTES = 64 * 1024 * 1024
# A batch whose queries hit the time limit this many times in a row stops: the rest error.
JS_MAX_TIMEOUTS_IN_A_ROW = 5
JS_SLICE_S = 0.05  # one eval runs queries this long (app.sandbox.javascript: slices)
SETUP_TIMEOUT_S = 10.0  # one eval that sets an isolate up or loads queries into it


@dataclass(frozen=True)
class Limits:
    """What one batch may use: seconds per query, V8 heap bytes, time-limit hits in a row."""

    time_s: float = JS_TIME_LIMIT_S
    heap_bytes: int = JS_HEAP_LIMIT_BYTES
    max_timeouts_in_a_row: int = JS_MAX_TIMEOUTS_IN_A_ROW


def time_message(time_limit: float) -> str:
    """Return the reason of a query that overran its time limit."""
    return f"scorer exceeded its {time_limit:g} s time limit"


def stopped_message(count: int) -> str:
    """Return the reason of the queries left after ``count`` time-limit hits in a row."""
    return f"stopped: the scorer hit its time limit on {count} queries in a row"


def memory_message(heap_limit: int) -> str:
    """Return the reason of a query that overran its heap limit."""
    return f"scorer exceeded its memory limit ({heap_limit / 2**20:g} MiB)"
