"""The async search client: sends one query to an endpoint and parses the answer.

One :class:`SearchClient` wraps the single ``httpx.AsyncClient`` shared by a whole run.
Every request carries the endpoint's headers and basic auth and its timeout, and waits for
the endpoint's concurrency and requests-per-minute limits. Connection failures (including
connect timeouts) and 502/503/504 answers are retried with exponential backoff; a read
timeout is not retried, so a slow engine does not multiply the wait.

The endpoint's timeout bounds each whole attempt (connecting, sending and reading the
entire answer), so an engine that trickles bytes cannot hold a query longer. Answers are
read up to the policy's size cap and parsed in a worker thread, off the event loop. Before
every attempt the destination is checked against the :mod:`app.outbound.policy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx

from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination, current_policy
from app.outbound.retry import Backoff, GaveUp, Retry, with_retries
from app.search.answers import RETRY_STATUSES, Answer
from app.search.engines import build_http_request, build_ids_http_request, http_error, parse_answer
from app.search.errors import (
    EngineResponseError,
    EngineTimeout,
    EngineUnavailable,
    RequestBuildError,
    SearchError,
)
from app.search.fieldspec import FieldSpec, parse_field_spec
from app.search.limits import EndpointLimits, SharedLimits
from app.search.types import EndpointConfig, SearchRequest, SearchResult

__all__ = ["SearchClient"]


def _auth(endpoint: EndpointConfig) -> httpx.BasicAuth | None:
    if not endpoint.basic_auth:
        return None
    user, _, password = endpoint.basic_auth.partition(":")
    return httpx.BasicAuth(user, password)


class SearchClient:
    """Runs searches through one shared ``httpx.AsyncClient`` with per-endpoint limits.

    Limits are kept per (engine, url, max_concurrency, requests_per_minute) and bound to
    the event loop of first use: create one SearchClient per run (per event loop). With
    ``shared`` limits (workers), each request also holds a slot that all processes share.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        attempts: int = 3,
        backoff_s: float = 0.2,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        policy: OutboundPolicy | None = None,
        shared: SharedLimits | None = None,
    ) -> None:
        self._http = http
        self._shared = shared
        self._policy = policy
        self._attempts = max(1, attempts)
        self._backoff_s = backoff_s
        self._sleep = sleep
        self._limits: dict[tuple[str, str, int, int], EndpointLimits] = {}

    def _limits_for(self, endpoint: EndpointConfig) -> EndpointLimits:
        key = (
            endpoint.engine,
            endpoint.url,
            endpoint.max_concurrency,
            endpoint.requests_per_minute,
        )
        if key not in self._limits:
            self._limits[key] = EndpointLimits(
                endpoint.max_concurrency, endpoint.requests_per_minute, sleep=self._sleep
            )
        return self._limits[key]

    async def search(self, endpoint: EndpointConfig, request: SearchRequest) -> SearchResult:
        """Return the parsed result of one query; raise EngineError subclasses only."""
        return await self._engine_request(
            endpoint,
            request.field_spec,
            lambda spec: build_http_request(self._http, endpoint, request),
            explain=request.explain,
            rows=request.rows,
        )

    async def fetch_ids(
        self, endpoint: EndpointConfig, ids: list[str], field_spec: str
    ) -> SearchResult:
        """Return the docs the engine has among these ids; raise EngineError subclasses only."""
        return await self._engine_request(
            endpoint,
            field_spec,
            lambda spec: build_ids_http_request(self._http, endpoint, ids, spec),
            explain=False,
        )

    async def _engine_request(
        self,
        endpoint: EndpointConfig,
        field_spec: str,
        build: Callable[[FieldSpec], httpx.Request],
        *,
        explain: bool,
        rows: int = 10,
        seen: Callable[[int, bytes], None] | None = None,
    ) -> SearchResult:
        if endpoint.secrets_error:  # nothing is sent without the endpoint's credentials
            raise RequestBuildError(endpoint.secrets_error)
        try:
            spec = parse_field_spec(field_spec)
            built = build(spec)
        except SearchError as exc:
            raise RequestBuildError(exc.message) from exc
        answer = await self._send_with_retry(endpoint, built)
        if seen is not None:
            seen(answer.status_code, answer.content)
        if answer.status_code >= 400:
            raise await http_error(endpoint, answer)
        return await parse_answer(endpoint, answer, spec, explain, rows)

    async def trial(
        self, endpoint: EndpointConfig, request: SearchRequest, seen: Callable[[int, bytes], None]
    ) -> SearchResult:
        """Return the parsed result of one query, passing the raw answer to ``seen`` first."""
        return await self._engine_request(
            endpoint,
            request.field_spec,
            lambda spec: build_http_request(self._http, endpoint, request),
            explain=request.explain,
            rows=request.rows,
            seen=seen,
        )

    async def _send_with_retry(self, endpoint: EndpointConfig, built: httpx.Request) -> Answer:
        limits = self._limits_for(endpoint)

        async def once() -> Answer:
            try:
                async with limits.slot():
                    if self._shared is None:
                        answer = await self._send(endpoint, built)
                    else:
                        async with self._shared.slot(endpoint):
                            answer = await self._send(endpoint, built)
            except EngineUnavailable as exc:
                raise Retry(exc.message) from exc
            if answer.status_code in RETRY_STATUSES:
                raise Retry(f"HTTP {answer.status_code}", value=answer)
            return answer

        backoff = Backoff(attempts=self._attempts, base_s=self._backoff_s)
        try:
            return await with_retries(once, backoff, sleep=self._sleep)
        except GaveUp as gave_up:  # the last answer stands, or the last failure
            last = gave_up.last
            if isinstance(last.value, Answer):
                return last.value
            assert isinstance(last.__cause__, EngineUnavailable)
            raise last.__cause__ from None

    async def _send(self, endpoint: EndpointConfig, built: httpx.Request) -> Answer:
        where = endpoint.safe_url
        policy = self._policy or current_policy()
        try:
            await check_destination(policy, built.url, where)
        except Unreachable as exc:
            raise EngineUnavailable(exc.message) from None
        try:
            async with asyncio.timeout(endpoint.timeout_s):
                return await self._fetch(built, endpoint, policy.max_response_bytes)
        except Unreachable as exc:  # refused by the policy as it connects
            raise EngineUnavailable(exc.message) from None
        except (TimeoutError, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:
            raise EngineTimeout(f"no answer from {where} within {endpoint.timeout_s:g} s") from exc
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # One message for refused and filtered ports alike: the error must not
            # become a port scanner.
            raise EngineUnavailable(f"cannot connect to {where}") from exc
        except httpx.HTTPError as exc:
            raise EngineUnavailable(f"request to {where} failed: {type(exc).__name__}") from exc

    async def _fetch(self, built: httpx.Request, endpoint: EndpointConfig, cap: int) -> Answer:
        response = await self._http.send(built, auth=_auth(endpoint), stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit():
                if int(declared) > cap:
                    raise _too_big(endpoint, cap)
                # A declared length within the cap is read in one go (h11 stops at that length).
                return Answer(response.status_code, response.reason_phrase, await response.aread())
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    raise _too_big(endpoint, cap)
                chunks.append(chunk)
        finally:
            await response.aclose()
        return Answer(response.status_code, response.reason_phrase, b"".join(chunks))


def _too_big(endpoint: EndpointConfig, cap: int) -> EngineResponseError:
    return EngineResponseError(
        f"the answer from {endpoint.safe_url} is larger than {cap / 1_048_576:g} MB"
    )
