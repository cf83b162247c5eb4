"""The async search client: sends one query to an endpoint and parses the answer.

One :class:`SearchClient` wraps the single ``httpx.AsyncClient`` shared by a whole run.
Every request carries the endpoint's headers and basic auth and its timeout, and waits for
the endpoint's concurrency and requests-per-minute limits. Connection failures (including
connect timeouts) and 502/503/504 answers are retried with exponential backoff; a read
timeout is not retried, so a slow engine does not multiply the wait.

The endpoint's timeout bounds each whole attempt (connecting, sending and reading the
entire answer), so an engine that trickles bytes cannot hold a query longer. Answers are
read up to the policy's size cap and parsed in a worker thread, off the event loop. Before
every attempt the destination is checked against the :mod:`app.search.policy`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from app.search.elastic import build_es_body, es_error_message, parse_es_response
from app.search.errors import (
    EngineError,
    EngineHTTPError,
    EngineResponseError,
    EngineTimeout,
    EngineUnavailable,
    RequestBuildError,
    SearchError,
)
from app.search.fieldspec import FieldSpec, parse_field_spec
from app.search.limits import EndpointLimits, SharedLimits
from app.search.lookup import build_es_ids_body, build_solr_ids_params
from app.search.models import EndpointConfig, SearchRequest, SearchResult
from app.search.policy import OutboundPolicy, check_destination, current_policy
from app.search.searchapi import build_searchapi_body, build_searchapi_params, map_answer
from app.search.solr import build_solr_params, parse_solr_response, solr_error_message
from app.search.vespa import build_vespa_body, parse_vespa_response, vespa_error_message
from app.vocabulary import Engine

__all__ = ["RETRY_STATUSES", "SearchClient", "build_http_request", "build_ids_http_request"]

RETRY_STATUSES = frozenset({502, 503, 504})
_FORM = "application/x-www-form-urlencoded"


# Parsing URLs costs more than rendering a query; a run reuses a handful.
@functools.lru_cache(maxsize=256)
def _base_url(url: str) -> httpx.URL:
    return httpx.URL(url)


@functools.lru_cache(maxsize=256)
def _es_search_url(url: str) -> httpx.URL:
    base = httpx.URL(url)
    return base.copy_with(path=base.path.rstrip("/") + "/_search")


def _auth(endpoint: EndpointConfig) -> httpx.BasicAuth | None:
    if not endpoint.basic_auth:
        return None
    user, _, password = endpoint.basic_auth.partition(":")
    return httpx.BasicAuth(user, password)


def build_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
) -> httpx.Request:
    """Return the httpx request for one query (headers and timeout; auth is added on send)."""
    headers = {"Accept": "application/json", **endpoint.headers}
    timeout = httpx.Timeout(endpoint.timeout_s)
    url = _base_url(endpoint.url)
    if endpoint.engine in _OTHER_ENGINES:
        return _build_other(http, endpoint, request, headers, timeout)
    if endpoint.engine != "solr":
        content = _json_bytes(build_es_body(request))
        headers = {"Content-Type": "application/json", **headers}
        built = http.build_request(
            "POST", _es_search_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    elif endpoint.method == "POST":
        form = str(httpx.QueryParams(tuple(build_solr_params(request))))
        headers["Content-Type"] = _FORM
        built = http.build_request("POST", url, content=form, headers=headers, timeout=timeout)
    else:
        full = url.copy_merge_params(tuple(build_solr_params(request)))
        built = http.build_request("GET", full, headers=headers, timeout=timeout)
    return built


_OTHER_ENGINES = frozenset({Engine.VESPA, Engine.SEARCHAPI, Engine.STATIC})


def _build_other(
    http: httpx.AsyncClient,
    endpoint: EndpointConfig,
    request: SearchRequest,
    headers: dict[str, str],
    timeout: httpx.Timeout,
) -> httpx.Request:
    if endpoint.engine == Engine.STATIC:
        raise RequestBuildError("a result file endpoint is read from its file, not over HTTP")
    if endpoint.engine == Engine.VESPA:
        base = _base_url(endpoint.url)
        url = base.copy_with(path=base.path.rstrip("/") + "/search/")
        content = _json_bytes(build_vespa_body(request))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request("POST", url, content=content, headers=headers, timeout=timeout)
    headers = {"Accept": "application/json, text/html;q=0.9, */*;q=0.5", **endpoint.headers}
    if endpoint.method == "POST":
        content = _json_bytes(build_searchapi_body(request))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request(
            "POST", _base_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    full = _base_url(endpoint.url).copy_merge_params(tuple(build_searchapi_params(request)))
    return http.build_request("GET", full, headers=headers, timeout=timeout)


def build_ids_http_request(
    http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
) -> httpx.Request:
    """Return the httpx request fetching these doc ids (auth is added on send)."""
    if endpoint.engine in _OTHER_ENGINES:
        raise RequestBuildError(f"a {endpoint.engine} endpoint cannot look docs up by id")
    headers = {"Accept": "application/json", **endpoint.headers}
    timeout = httpx.Timeout(endpoint.timeout_s)
    if endpoint.engine != "solr":
        content = _json_bytes(build_es_ids_body(ids, spec))
        headers = {"Content-Type": "application/json", **headers}
        return http.build_request(
            "POST", _es_search_url(endpoint.url), content=content, headers=headers, timeout=timeout
        )
    params = build_solr_ids_params(ids, spec)
    if endpoint.method == "POST":
        headers["Content-Type"] = _FORM
        form = str(httpx.QueryParams(params))
        return http.build_request(
            "POST", _base_url(endpoint.url), content=form, headers=headers, timeout=timeout
        )
    full = _base_url(endpoint.url).copy_merge_params(params)
    return http.build_request("GET", full, headers=headers, timeout=timeout)


def _json_bytes(body: Any) -> bytes:
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer beyond 64 bits in the options, say
        return json.dumps(body).encode()


@dataclass(frozen=True)
class _Answer:
    """An engine's answer, read whole (up to the size cap) before the timeout ran out."""

    status_code: int
    reason_phrase: str
    content: bytes


_TOO_DEEP = object()


# NUL and unpaired surrogates cannot be stored (PostgreSQL refuses them in text and JSON).
_UNSTORABLE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89abcdefABCDEF])|\x00")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _load(content: bytes) -> Any:
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        # What orjson refuses, the standard library may still read (NaN, integers beyond 64
        # bits, lone surrogates); it also tells nesting too deep from text that is not JSON.
        try:
            body = json.loads(content)
        except ValueError:
            return None
        except RecursionError:
            return _TOO_DEEP
    # Substring checks first: they cost a fraction of the pattern's scan of a whole answer.
    if (b"\\u" in content or b"\x00" in content) and _UNSTORABLE_ESCAPE.search(content):
        body = _storable(body)
    return body


def _storable(value: Any) -> Any:
    """Return ``value`` with NUL and lone surrogates replaced by U+FFFD, keys included."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    return value


# Answers up to this size are parsed on the event loop: orjson takes microseconds for them,
# less than the hop to a thread would.
INLINE_PARSE_BYTES = 256 * 1024


async def _json(answer: _Answer) -> Any:
    # Large answers cost real CPU: keep them off the event loop.
    if len(answer.content) <= INLINE_PARSE_BYTES:
        return _load(answer.content)
    return await asyncio.to_thread(_load, answer.content)


def _snippet(answer: _Answer) -> str:
    text = " ".join(answer.content[:2000].decode("utf-8", "replace").split())
    return text[:200] + ("…" if len(text) > 200 else "")


async def _http_error(endpoint: EndpointConfig, answer: _Answer) -> EngineError:
    body = await _json(answer)
    extract = _ERROR_MESSAGES.get(endpoint.engine, es_error_message)
    detail = (extract(body) if isinstance(body, dict) else None) or _snippet(answer)
    detail = (detail or answer.reason_phrase)[:300]
    message = f"HTTP {answer.status_code} from {endpoint.safe_url}: {detail}"
    if answer.status_code in RETRY_STATUSES:
        return EngineUnavailable(message)
    return EngineHTTPError(message, status_code=answer.status_code)


_ERROR_MESSAGES: dict[str, Callable[[Any], str | None]] = {
    Engine.SOLR: solr_error_message,
    Engine.VESPA: vespa_error_message,
    Engine.SEARCHAPI: lambda body: None,  # an unknown service: its answer's start says most
}


async def _parse(
    endpoint: EndpointConfig, answer: _Answer, spec: FieldSpec, explain: bool, rows: int = 10
) -> SearchResult:
    body = await _json(answer)
    if endpoint.engine == Engine.SEARCHAPI:
        text = answer.content.decode("utf-8", "replace")
        usable = body if body is not None and body is not _TOO_DEEP else None
        return await map_answer(endpoint.mapper_code or "", usable, text, rows)
    if body is _TOO_DEEP:
        raise EngineResponseError(f"the answer from {endpoint.safe_url} is nested too deeply")
    if body is None:
        raise EngineResponseError(
            f"response from {endpoint.safe_url} is not JSON: {_snippet(answer)!r}"
        )
    if endpoint.engine == Engine.SOLR:
        return parse_solr_response(body, spec, explain=explain)
    if endpoint.engine == Engine.VESPA:
        return parse_vespa_response(body, spec, explain=explain)
    return parse_es_response(body, spec)


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
            raise await _http_error(endpoint, answer)
        return await _parse(endpoint, answer, spec, explain, rows)

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

    async def _send_with_retry(self, endpoint: EndpointConfig, built: httpx.Request) -> _Answer:
        limits = self._limits_for(endpoint)
        for attempt in range(1, self._attempts + 1):
            last = attempt == self._attempts
            try:
                async with limits.slot():
                    if self._shared is None:
                        answer = await self._send(endpoint, built)
                    else:
                        async with self._shared.slot(endpoint):
                            answer = await self._send(endpoint, built)
            except EngineUnavailable:
                if last:
                    raise
            else:
                if answer.status_code not in RETRY_STATUSES or last:
                    return answer
            await self._sleep(self._backoff_s * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _send(self, endpoint: EndpointConfig, built: httpx.Request) -> _Answer:
        where = endpoint.safe_url
        policy = self._policy or current_policy()
        await check_destination(policy, built.url, where)
        try:
            async with asyncio.timeout(endpoint.timeout_s):
                return await self._fetch(built, endpoint, policy.max_response_bytes)
        except (TimeoutError, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:
            raise EngineTimeout(f"no answer from {where} within {endpoint.timeout_s:g} s") from exc
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # One message for refused and filtered ports alike: the error must not
            # become a port scanner.
            raise EngineUnavailable(f"cannot connect to {where}") from exc
        except httpx.HTTPError as exc:
            raise EngineUnavailable(f"request to {where} failed: {type(exc).__name__}") from exc

    async def _fetch(self, built: httpx.Request, endpoint: EndpointConfig, cap: int) -> _Answer:
        response = await self._http.send(built, auth=_auth(endpoint), stream=True)
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit():
                if int(declared) > cap:
                    raise _too_big(endpoint, cap)
                # A declared length within the cap is read in one go (h11 stops at that length).
                return _Answer(response.status_code, response.reason_phrase, await response.aread())
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    raise _too_big(endpoint, cap)
                chunks.append(chunk)
        finally:
            await response.aclose()
        return _Answer(response.status_code, response.reason_phrase, b"".join(chunks))


def _too_big(endpoint: EndpointConfig, cap: int) -> EngineResponseError:
    return EngineResponseError(
        f"the answer from {endpoint.safe_url} is larger than {cap / 1_048_576:g} MB"
    )
