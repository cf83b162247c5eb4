"""Calling a judge: limits, retries, the outbound policy, and one outcome per pair.

Every request goes through the engines' outbound policy (allowed hosts, private addresses
blocked, checked again on the connection's own resolution: ``app.outbound.network``) and
through a client that follows no redirect, so the key is only ever sent to ``base_url``'s
host. A 429 waits as long as ``Retry-After`` (seconds or a date) or ``retry-after-ms`` says;
5xx answers, connection failures and timeouts are retried with exponential backoff and
jitter; anything else fails that pair with the reason.

Every wait is bounded by the judge's ``timeout_s``: each request, and all the waiting
between one pair's attempts together (backoff is cut to what is left of it; a 429 asking
for longer than what is left fails the pair at once, saying so, rather than sleeping). A
trial also waits at most ``timeout_s`` for its turn within the limits.

The requests/minute limit is a window of a minute, not an even spacing: up to that many
calls go at once when the concurrency allows (a trial of 5 pairs does not wait a second
between calls), and never more in any minute.

The judge's requests/minute, tokens/minute and max concurrency are held per account (the
provider, URL, key and headers with those limits) by the client: the process has one
client for its runs and trials (the run manager's, or the worker's), so they hold across
every caller; a judge has one active run at a time, so they hold across workers too.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from app.judges.providers import Call, ReplyRejected, build_call, parse_judgement, parse_wire
from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination, current_policy
from app.outbound.retry import Backoff, GaveUp, Retry, with_retries

__all__ = ["JudgeClient", "JudgeConfig", "Outcome", "estimate_tokens"]

RAW_REPLY_CAP = 4000
RETRY_STATUSES = frozenset({500, 502, 503, 504, 529})
# The requests/minute window, with a margin for the jitter between sending and arriving.
WINDOW_S = 60.5
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class JudgeConfig:
    """A judge's settings as plain data, secrets unsealed (built just before calling)."""

    provider: str
    base_url: str
    model: str
    api_key: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    temperature: float = 0.0
    max_output_tokens: int = 512
    requests_per_minute: int = 60
    tokens_per_minute: int = 0
    max_concurrency: int = 4
    timeout_s: float = 30.0
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None

    @property
    def priced(self) -> bool:
        """Whether the judge has a price: without one, its costs are unknown (not free)."""
        return self.price_input_per_mtok is not None or self.price_output_per_mtok is not None

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """Return the price of these tokens in USD (0 where no price is set)."""
        return (
            tokens_in * (self.price_input_per_mtok or 0.0)
            + tokens_out * (self.price_output_per_mtok or 0.0)
        ) / 1_000_000


@dataclass
class Outcome:
    """What asking the judge about one pair gave: a rating, or the reason there is none."""

    rating: float | None = None
    explanation: str | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    raw_reply: str | None = None


def estimate_tokens(text: str) -> int:
    """Return a rough token count of ``text`` (about four characters a token, rounded up)."""
    return max(1, (len(text) + 3) // 4)


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


class _Limits:
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
        self.semaphore.release()


def _limit_key(config: JudgeConfig) -> tuple[object, ...]:
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


class _Failed(Exception):
    """This pair fails with the reason; no retry."""


class JudgeClient:
    """Asks judges for ratings through one shared ``httpx.AsyncClient`` (no redirects).

    One per process and event loop: its limits are what every caller shares.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        attempts: int = 4,
        backoff_s: float = 0.5,
        max_wait_s: float = 120.0,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
        policy: OutboundPolicy | None = None,
    ) -> None:
        self._http = http
        self._attempts = max(1, attempts)
        self._backoff_s = backoff_s
        self._max_wait_s = max_wait_s
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter
        self._policy = policy
        self._limits: dict[tuple[object, ...], _Limits] = {}
        self.requests_sent = 0

    def _limits_for(self, config: JudgeConfig) -> _Limits:
        key = _limit_key(config)
        if key not in self._limits:
            self._limits[key] = _Limits(config, self._sleep, self._clock)
        return self._limits[key]

    async def judge(
        self,
        config: JudgeConfig,
        prompt: str,
        scale: Sequence[float],
        *,
        attempts: int | None = None,
        turn_wait_s: float | None = None,
    ) -> Outcome:
        """Return the judge's rating of one prompt, or the reason it has none; never raises.

        ``attempts`` overrides the client's; ``turn_wait_s`` bounds the wait for a turn
        within the limits (a trial's), where a run's pairs wait as long as pacing needs.
        """
        call = build_call(
            provider=config.provider,
            base_url=config.base_url,
            model=config.model,
            prompt=prompt,
            scale=scale,
            temperature=config.temperature,
            max_output_tokens=config.max_output_tokens,
            api_key=config.api_key,
            headers=dict(config.headers),
        )
        started = time.perf_counter()
        outcome = Outcome()
        try:
            body = await self._send_with_retry(
                config,
                call,
                estimate_tokens(prompt),
                attempts=max(1, attempts or self._attempts),
                turn_wait_s=turn_wait_s,
            )
            wire = parse_wire(config.provider, body)
            outcome.tokens_in, outcome.tokens_out = wire.tokens_in, wire.tokens_out
            outcome.raw_reply = wire.text[:RAW_REPLY_CAP]
            outcome.cost_usd = config.cost(wire.tokens_in, wire.tokens_out)
            judgement = parse_judgement(wire.text, scale)
            outcome.rating, outcome.explanation = judgement.rating, judgement.explanation
        except (ReplyRejected, _Failed) as exc:
            outcome.error = str(exc)
        outcome.latency_ms = (time.perf_counter() - started) * 1000
        return outcome

    async def _send_with_retry(
        self,
        config: JudgeConfig,
        call: Call,
        prompt_tokens: int,
        *,
        attempts: int,
        turn_wait_s: float | None,
    ) -> Any:
        limits = self._limits_for(config)

        async def once() -> Any:
            await self._turn(limits, config, prompt_tokens, turn_wait_s)
            try:
                return await self._attempt(config, call)
            finally:
                limits.release()

        # What is left of the pair's waiting between attempts (all of it: timeout_s); a 429
        # (the server said when) is its own allowance, twice the attempts.
        backoff = Backoff(
            attempts=attempts,
            base_s=self._backoff_s,
            jitter=self._jitter,
            max_wait_s=self._max_wait_s,
            patience_s=config.timeout_s,
        )
        try:
            return await with_retries(once, backoff, sleep=self._sleep)
        except GaveUp as gave_up:
            raise _Failed(_gave_up(gave_up, config)) from None

    async def _turn(
        self, limits: _Limits, config: JudgeConfig, prompt_tokens: int, wait_s: float | None
    ) -> None:
        """Wait for a turn within the judge's limits (at most ``wait_s`` when given)."""
        tokens = prompt_tokens + config.max_output_tokens
        if wait_s is None:
            await limits.acquire(tokens)
            return
        try:
            async with asyncio.timeout(wait_s):
                await limits.acquire(tokens)
        except TimeoutError:
            raise _Failed(
                f"no turn within the judge's limits ({config.requests_per_minute} requests a "
                f"minute, {config.max_concurrency} at once) in {wait_s:g} s: the judge is busy "
                "with other calls; try again later"
            ) from None

    async def _attempt(self, config: JudgeConfig, call: Call) -> Any:
        policy = self._policy or current_policy()
        url = httpx.URL(call.url)
        where = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"
        try:
            await check_destination(policy, url, where)
        except Unreachable as exc:
            raise _Failed(exc.message) from None
        self.requests_sent += 1
        try:
            async with asyncio.timeout(config.timeout_s):
                status, headers, content = await self._fetch(
                    call, config, policy.max_response_bytes
                )
        except (TimeoutError, httpx.TimeoutException):
            raise Retry(f"no answer from {where} within {config.timeout_s:g} s") from None
        except Unreachable as exc:  # the connection's own policy check
            raise _Failed(exc.message) from None
        except httpx.HTTPError as exc:
            raise Retry(f"cannot reach {where} ({type(exc).__name__})") from None
        if status == 429:
            raise Retry(f"HTTP 429 from {where}", wait_s=_retry_after(headers, self._fallback()))
        if status in RETRY_STATUSES:
            raise Retry(f"HTTP {status} from {where}: {_error_text(content)}")
        if 300 <= status < 400:
            raise _Failed(
                f"{where} answered with a redirect (HTTP {status}); redirects are not followed, "
                "so the key never leaves the judge's host: set base_url to the final address"
            )
        if status >= 400:
            raise _Failed(f"HTTP {status} from {where}: {_error_text(content)}")
        try:
            return json.loads(content)
        except (ValueError, RecursionError):
            raise _Failed(f"the answer from {where} is not JSON: {_error_text(content)}") from None

    def _fallback(self) -> float:
        return self._backoff_s * (0.5 + self._jitter())

    async def _fetch(
        self, call: Call, config: JudgeConfig, cap: int
    ) -> tuple[int, httpx.Headers, bytes]:
        try:
            request = self._http.build_request(
                "POST",
                call.url,
                content=json.dumps(call.body).encode(),
                headers=call.headers,
                timeout=httpx.Timeout(config.timeout_s),
            )
        except (UnicodeError, ValueError, httpx.InvalidURL) as exc:  # a header httpx refuses
            raise _Failed(f"the request cannot be built: {type(exc).__name__}") from None
        response = await self._http.send(request, stream=True, follow_redirects=False)
        try:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    raise _Failed(f"the judge's answer is larger than {cap // 1_048_576} MB")
                chunks.append(chunk)
        finally:
            await response.aclose()
        return response.status_code, response.headers, b"".join(chunks)


def _gave_up(gave_up: GaveUp, config: JudgeConfig) -> str:
    """Why a pair failed when no try was left."""
    last = gave_up.last
    if gave_up.why == "throttled":
        return f"{last.reason}, {gave_up.throttled} times"
    if gave_up.why == "patience":
        return (
            f"{last.reason} asking to wait {last.wait_s:g} s, longer than the "
            f"judge's timeout_s ({config.timeout_s:g} s) leaves"
        )
    return f"{last.reason} (after {gave_up.failures} attempts)"


def _retry_after(headers: httpx.Headers, fallback: float) -> float:
    """Return how long a 429 asks to wait: retry-after-ms, Retry-After seconds or date."""
    millis = headers.get("retry-after-ms", "").strip()
    try:
        if millis:
            return max(0.0, float(millis) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after", "").strip()
    if not value:
        return fallback
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return fallback
    return max(0.0, when.timestamp() - time.time())


def _error_text(content: bytes) -> str:
    """Return the provider's error message (OpenAI and Anthropic put it in error.message)."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if isinstance(message, str):
            return message[:300]
    text = " ".join(content[:1000].decode("utf-8", "replace").split())
    return text[:200] or "(empty answer)"
