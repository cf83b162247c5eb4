"""A judge account's limits: requests a minute, tokens a minute and calls at once.

The requests/minute limit is a window of a minute, not an even spacing: up to that many
calls go at once when the concurrency allows (a trial of 5 pairs does not wait a second
between calls), and never more in any minute.

The limits are held per account (the provider, URL, key and headers with those limits):
``limit_key`` says which account a judge's calls count against.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from app.judges.judge import JudgeConfig

__all__ = ["WINDOW_S", "Limits", "Sleep", "limit_key"]

# The requests/minute window, with a margin for the jitter between sending and arriving.
WINDOW_S = 60.5
Sleep = Callable[[float], Awaitable[None]]


class _TokenWindow:
    """Tokens spent in the last 60 s; a request waits until its estimate fits the limit."""

    def __init__(self, per_minute: int, sleep: Sleep, clock: Callable[[], float]) -> None:
        self._limit = per_minute
        self._spent: deque[tuple[float, int]] = deque()
        self._sleep = sleep
        self._clock = clock

    async def acquire(self, tokens: int) -> None:
        if self._limit <= 0:
            return
        tokens = min(tokens, self._limit)  # one request bigger than the limit still goes alone
        while True:
            now = self._clock()
            while self._spent and self._spent[0][0] <= now - 60:
                self._spent.popleft()
            if sum(t for _, t in self._spent) + tokens <= self._limit:
                self._spent.append((now, tokens))
                return
            await self._sleep(max(0.01, self._spent[0][0] + 60 - now))


class _RequestWindow:
    """At most ``per_minute`` requests in any window of a minute, counted when they leave.

    A burst up to the whole budget goes at once; then each call waits until the oldest has
    left the window. This log of actual send times (over a minute and a margin for the
    network's jitter) holds the limit in every minute, where a token bucket of the same size
    would let nearly twice the budget through in the minute after a burst (its refill on top).
    """

    def __init__(self, per_minute: int, sleep: Sleep, clock: Callable[[], float]) -> None:
        self._limit = per_minute
        self._sent: deque[float] = deque()
        self._sleep = sleep
        self._clock = clock

    async def acquire(self) -> None:
        while True:
            now = self._clock()
            while self._sent and self._sent[0] <= now - WINDOW_S:
                self._sent.popleft()
            if len(self._sent) < self._limit:
                self._sent.append(now)
                return
            await self._sleep(max(0.001, self._sent[0] + WINDOW_S - now))


class Limits:
    """One account's concurrency slots and its token and request allowances."""

    def __init__(self, config: JudgeConfig, sleep: Sleep, clock: Callable[[], float]) -> None:
        self.semaphore = asyncio.Semaphore(max(1, config.max_concurrency))
        self.window = _RequestWindow(config.requests_per_minute, sleep, clock)
        self.tokens = _TokenWindow(config.tokens_per_minute, sleep, clock)

    async def acquire(self, tokens: int) -> None:
        """Wait for a turn: a concurrency slot, then the token and request allowances."""
        await self.semaphore.acquire()
        try:
            await self.tokens.acquire(tokens)
            await self.window.acquire()
        except BaseException:  # cancelled or timed out while waiting: the slot goes back
            self.semaphore.release()
            raise

    def release(self) -> None:
        """Give the concurrency slot back."""
        self.semaphore.release()


def limit_key(config: JudgeConfig) -> tuple[object, ...]:
    """The account whose limits a call counts against: where, with which key, which limits."""
    return (
        config.provider,
        config.base_url.rstrip("/"),
        config.api_key,
        config.headers,
        config.requests_per_minute,
        config.tokens_per_minute,
        config.max_concurrency,
    )
