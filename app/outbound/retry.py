"""One retry loop for every outbound call: engines' searches, judges' calls, webhooks.

An attempt raises ``Retry`` when it failed in a way worth another try; ``with_retries``
waits as ``Backoff`` says (doubling from ``base_s``, with jitter when given) and tries
again, until a try succeeds or the backoff gives up (``GaveUp``, with the last ``Retry``).
A ``Retry`` that carries the server's own wait (a 429's Retry-After) is a throttle, not a
failure: it is honoured up to ``max_wait_s``, as long as the patience left allows, at most
``throttles`` times. Webhook deliveries retry across ticks (each try is recorded), so they
take only the schedule: ``next_delay``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

__all__ = ["Backoff", "GaveUp", "Retry", "Sleep", "next_delay", "with_retries"]

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[object]]


class Retry(Exception):
    """This attempt failed in a way worth another try.

    ``wait_s``: the server said how long to wait. ``value``: what the caller may still use
    when no try is left (an engine's last 503 answer, reported as that answer).
    """

    def __init__(self, reason: str, *, wait_s: float | None = None, value: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait_s = wait_s
        self.value = value


class GaveUp(Exception):
    """No try is left: after ``failures`` failed tries, ``throttled`` server waits, or a
    server wait longer than the patience left (``why``); ``last`` is the last ``Retry``."""

    def __init__(
        self,
        last: Retry,
        *,
        why: Literal["attempts", "throttled", "patience"],
        failures: int,
        throttled: int,
    ) -> None:
        super().__init__(last.reason)
        self.last = last
        self.why = why
        self.failures = failures
        self.throttled = throttled


@dataclass(frozen=True)
class Backoff:
    """How often to try and how long to wait between tries."""

    attempts: int  # tries in all that may fail (1: no retry)
    base_s: float  # the wait after the first failure, doubled after each next one
    jitter: Callable[[], float] | None = None  # when given, each wait is times 0.5 + jitter()
    max_wait_s: float = math.inf  # the longest server wait honoured
    patience_s: float = math.inf  # all the waiting between tries (backoff is cut to it)
    throttles: int | None = None  # server waits honoured (None: twice ``attempts``)

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th failed try."""
        wait = self.base_s * 2.0 ** (failures - 1)
        return wait * (0.5 + self.jitter()) if self.jitter is not None else wait


async def with_retries(
    attempt: Callable[[], Awaitable[T]], backoff: Backoff, *, sleep: Sleep = asyncio.sleep
) -> T:
    """Return what ``attempt`` returns, trying again on ``Retry`` as ``backoff`` says.

    Anything but ``Retry`` raised by ``attempt`` goes through at once; ``GaveUp`` when no
    try is left.
    """
    failures = throttled = 0
    patience = backoff.patience_s
    throttles = backoff.throttles if backoff.throttles is not None else 2 * backoff.attempts
    while True:
        try:
            return await attempt()
        except Retry as exc:
            if exc.wait_s is not None:
                throttled += 1
                if throttled > throttles:
                    raise GaveUp(
                        exc, why="throttled", failures=failures, throttled=throttled
                    ) from None
                wait = min(exc.wait_s, backoff.max_wait_s)
                if wait > patience:
                    raise GaveUp(
                        exc, why="patience", failures=failures, throttled=throttled
                    ) from None
            else:
                failures += 1
                if failures >= backoff.attempts:
                    raise GaveUp(
                        exc, why="attempts", failures=failures, throttled=throttled
                    ) from None
                wait = max(0.0, min(backoff.delay(failures), patience))
        patience -= wait
        await sleep(wait)


def next_delay(schedule: Sequence[float], attempts: int) -> float | None:
    """For tries spread over time (one per tick, each recorded): how long after the
    ``attempts``-th failed try the next one is due, or None when none is left."""
    if attempts < 1 or attempts > len(schedule):
        return None
    return schedule[attempts - 1]
