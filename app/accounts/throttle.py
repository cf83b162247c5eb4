"""Login throttling: failed attempts counted per account and per client address."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["LoginThrottle"]


class LoginThrottle:
    """A sliding-window count of failed logins, kept in this process's memory.

    Several replicas each keep their own counts, so the effective limit is per replica.
    """

    def __init__(
        self,
        *,
        per_account: int,
        per_address: int,
        window_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {"account": per_account, "address": per_address}
        self._window = window_s
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, email: str, address: str) -> list[tuple[str, str]]:
        return [("account", email.strip().lower()), ("address", address)]

    def retry_after(self, *, email: str, address: str) -> int:
        """Return the seconds to wait before another attempt is allowed (0: allowed now)."""
        now = self._clock()
        wait = 0.0
        with self._lock:
            for key in self._keys(email, address):
                times = self._prune(key, now)
                if len(times) >= self._limits[key[0]]:
                    wait = max(wait, times[0] + self._window - now)
        return math.ceil(wait) if wait > 0 else 0

    def failed(self, *, email: str, address: str) -> None:
        """Count one failed attempt against the account and the address."""
        now = self._clock()
        with self._lock:
            for key in self._keys(email, address):
                self._prune(key, now).append(now)
        if len(self._failures) > 50_000:
            self.forget_idle()

    def succeeded(self, *, email: str) -> None:
        """Forget the account's failures after a successful login."""
        with self._lock:
            self._failures.pop(("account", email.strip().lower()), None)

    def _prune(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and times[0] <= now - self._window:
            times.popleft()
        return times

    def reset(self) -> None:
        """Forget every failure."""
        with self._lock:
            self._failures.clear()

    def forget_idle(self) -> None:
        """Drop keys with no failure left in the window, so memory stays bounded."""
        now = self._clock()
        with self._lock:
            for key in [
                k for k, t in self._failures.items() if not t or t[-1] <= now - self._window
            ]:
                del self._failures[key]
