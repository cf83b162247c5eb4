"""The one retry loop of outbound calls: waits, giving up, server waits, patience."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from app.outbound.retry import Backoff, GaveUp, Retry, next_delay, with_retries


def _attempts(results: list[object]) -> tuple[Callable[[], Awaitable[object]], list[int]]:
    """An attempt that raises or returns ``results`` in turn, and the count of its calls."""
    calls: list[int] = []

    async def attempt() -> object:
        calls.append(len(calls) + 1)
        result = results[len(calls) - 1]
        if isinstance(result, BaseException):
            raise result
        return result

    return attempt, calls


def _run(attempt: Callable[[], Awaitable[object]], backoff: Backoff) -> tuple[object, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return asyncio.run(with_retries(attempt, backoff, sleep=sleep)), waits


def test_failures_are_retried_with_doubling_waits_until_one_succeeds() -> None:
    attempt, calls = _attempts([Retry("503"), Retry("503"), "ok"])
    result, waits = _run(attempt, Backoff(attempts=4, base_s=0.5))
    assert (result, calls, waits) == ("ok", [1, 2, 3], [0.5, 1.0])


def test_the_last_failure_gives_up_with_its_retry_and_counts() -> None:
    last = Retry("HTTP 503", value="the answer")
    attempt, calls = _attempts([Retry("first"), Retry("second"), last])
    with pytest.raises(GaveUp) as info:
        _run(attempt, Backoff(attempts=3, base_s=1.0))
    assert info.value.last is last and info.value.last.value == "the answer"
    assert (info.value.why, info.value.failures, info.value.throttled) == ("attempts", 3, 0)
    assert calls == [1, 2, 3]


def test_any_other_error_goes_through_at_once() -> None:
    attempt, calls = _attempts([Retry("one"), ValueError("not JSON")])
    with pytest.raises(ValueError, match="not JSON"):
        _run(attempt, Backoff(attempts=5, base_s=1.0))
    assert calls == [1, 2]


def test_jitter_scales_each_wait_and_patience_cuts_it() -> None:
    attempt, _ = _attempts([Retry("a"), Retry("b"), Retry("c"), "ok"])
    backoff = Backoff(attempts=5, base_s=1.0, jitter=lambda: 1.0, patience_s=4.0)
    # 1.5 s, then 3 s (only 2.5 s of patience left), then nothing left: 0 s.
    assert _run(attempt, backoff) == ("ok", [1.5, 2.5, 0.0])


def test_a_server_wait_is_a_throttle_not_a_failure() -> None:
    attempt, _ = _attempts([Retry("429", wait_s=7.0), Retry("429", wait_s=500.0), "ok"])
    result, waits = _run(attempt, Backoff(attempts=1, base_s=1.0, max_wait_s=120.0))
    assert (result, waits) == ("ok", [7.0, 120.0])  # capped at max_wait_s; no failure counted


def test_server_waits_give_up_past_their_count_or_the_patience_left() -> None:
    attempt, calls = _attempts([Retry("429", wait_s=0.0)] * 5)
    with pytest.raises(GaveUp) as info:
        _run(attempt, Backoff(attempts=2, base_s=1.0))
    assert (info.value.why, info.value.throttled, calls) == ("throttled", 5, [1, 2, 3, 4, 5])
    attempt, _ = _attempts([Retry("429", wait_s=3.0), Retry("429", wait_s=3.0)])
    with pytest.raises(GaveUp) as info:
        _run(attempt, Backoff(attempts=2, base_s=1.0, patience_s=5.0))
    assert (info.value.why, info.value.last.wait_s) == ("patience", 3.0)


def test_tries_spread_over_time_follow_the_schedule() -> None:
    schedule = (30.0, 120.0, 600.0)
    assert [next_delay(schedule, n) for n in (1, 2, 3, 4)] == [30.0, 120.0, 600.0, None]
    assert next_delay(schedule, 0) is None and next_delay((), 1) is None
