"""Calling a judge: limits, retries, the outbound policy, and one outcome per pair.

Every request goes through the engines' outbound policy (allowed hosts, private addresses
blocked, checked again on the connection's own resolution: ``app.outbound.network``) and
through a client that follows no redirect, so the key is only ever sent to ``base_url``'s
host. A 429 waits as long as the server says (``app.judges.answers``); 5xx answers,
connection failures and timeouts are retried with exponential backoff and jitter; anything
else fails that pair with the reason.

Every wait is bounded by the judge's ``timeout_s``: each request, and all the waiting
between one pair's attempts together (backoff is cut to what is left of it; a 429 asking
for longer than what is left fails the pair at once, saying so, rather than sleeping). A
trial also waits at most ``timeout_s`` for its turn within the limits.

The judge's requests/minute, tokens/minute and max concurrency (``app.judges.limits``) are
held per account by the client: the process has one client for its runs and trials (the run
manager's, or the worker's), so they hold across every caller; a judge has one active run at
a time, so they hold across workers too.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from app.judges.answers import Failed, gave_up_reason, read_answer
from app.judges.judge import JudgeConfig, Outcome, estimate_tokens
from app.judges.limits import Limits, Sleep, limit_key
from app.judges.providers import Call, ReplyRejected, build_call, parse_judgement, parse_wire
from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination, current_policy
from app.outbound.retry import Backoff, GaveUp, Retry, with_retries

__all__ = ["JudgeClient"]

RAW_REPLY_CAP = 4000


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
        self._limits: dict[tuple[object, ...], Limits] = {}
        self.requests_sent = 0

    def _limits_for(self, config: JudgeConfig) -> Limits:
        key = limit_key(config)
        if key not in self._limits:
            self._limits[key] = Limits(config, self._sleep, self._clock)
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
        call = _call_for(config, prompt, scale)
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
            _read_reply(outcome, config, body, scale)
        except (ReplyRejected, Failed) as exc:
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
            raise Failed(gave_up_reason(gave_up, config.timeout_s)) from None

    async def _turn(
        self, limits: Limits, config: JudgeConfig, prompt_tokens: int, wait_s: float | None
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
            raise Failed(
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
            raise Failed(exc.message) from None
        self.requests_sent += 1
        try:
            async with asyncio.timeout(config.timeout_s):
                status, headers, content = await self._fetch(
                    call, config, policy.max_response_bytes
                )
        except (TimeoutError, httpx.TimeoutException):
            raise Retry(f"no answer from {where} within {config.timeout_s:g} s") from None
        except Unreachable as exc:  # the connection's own policy check
            raise Failed(exc.message) from None
        except httpx.HTTPError as exc:
            raise Retry(f"cannot reach {where} ({type(exc).__name__})") from None
        return read_answer(status, headers, content, where, self._fallback)

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
            raise Failed(f"the request cannot be built: {type(exc).__name__}") from None
        response = await self._http.send(request, stream=True, follow_redirects=False)
        try:
            content = await _read_capped(response, cap)
        finally:
            await response.aclose()
        return response.status_code, response.headers, content


def _call_for(config: JudgeConfig, prompt: str, scale: Sequence[float]) -> Call:
    """Build the provider's request asking the judge about one prompt."""
    return build_call(
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


def _read_reply(outcome: Outcome, config: JudgeConfig, body: Any, scale: Sequence[float]) -> None:
    """Fill ``outcome`` from the provider's answer: its tokens, cost, reply and rating."""
    wire = parse_wire(config.provider, body)
    outcome.tokens_in, outcome.tokens_out = wire.tokens_in, wire.tokens_out
    outcome.raw_reply = wire.text[:RAW_REPLY_CAP]
    outcome.cost_usd = config.cost(wire.tokens_in, wire.tokens_out)
    judgement = parse_judgement(wire.text, scale)
    outcome.rating, outcome.explanation = judgement.rating, judgement.explanation


async def _read_capped(response: httpx.Response, cap: int) -> bytes:
    """Return the answer's bytes, failing the pair when they come to more than ``cap``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise Failed(f"the judge's answer is larger than {cap // 1_048_576} MB")
        chunks.append(chunk)
    return b"".join(chunks)
