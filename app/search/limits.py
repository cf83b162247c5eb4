"""Per-endpoint concurrency and request-rate limits for the async client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.search.types import EndpointConfig

__all__ = ["EndpointLimits", "RateLimiter", "SharedLimits"]

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


class RateLimiter:
    """Spaces requests ``60 / requests_per_minute`` seconds apart (0 means unlimited)."""

    def __init__(
        self,
        requests_per_minute: int,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._interval = 60.0 / requests_per_minute if requests_per_minute > 0 else 0.0
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0

    async def acquire(self) -> None:
        """Wait until the next request slot; slots are handed out in call order."""
        if not self._interval:
            return
        now = self._clock()
        slot = max(now, self._next)
        # Reserve the slot before sleeping so concurrent callers queue behind it.
        self._next = slot + self._interval
        if slot > now:
            await self._sleep(slot - now)


class EndpointLimits:
    """The semaphore and rate limiter shared by every request to one endpoint."""

    def __init__(self, max_concurrency: int, requests_per_minute: int, *, sleep: Sleep) -> None:
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._rate = RateLimiter(requests_per_minute, sleep=sleep)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one concurrency slot, after waiting for the rate limit."""
        async with self._semaphore:
            await self._rate.acquire()
            yield


class SharedLimits(Protocol):
    """Limits that several processes hold together (workers on many machines).

    ``slot(endpoint)`` is held around each request, inside the process's own limits, so
    that an endpoint's ``max_concurrency`` and ``requests_per_minute`` hold across all of
    them.
    """

    def slot(self, endpoint: EndpointConfig) -> AbstractAsyncContextManager[None]: ...
