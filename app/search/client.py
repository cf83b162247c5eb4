"""The async search client: sends one query to an endpoint and parses the answer.

One :class:`SearchClient` wraps the single ``httpx.AsyncClient`` shared by a whole run.
Every request carries the endpoint's headers and basic auth and its timeout, and waits for
the endpoint's concurrency and requests-per-minute limits. Connection failures (including
connect timeouts) and 502/503/504 answers are retried with exponential backoff; a read
timeout is not retried, so a slow engine does not multiply the wait.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

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
from app.search.limits import EndpointLimits
from app.search.models import EndpointConfig, SearchRequest, SearchResult
from app.search.solr import build_solr_params, parse_solr_response, solr_error_message

__all__ = ["RETRY_STATUSES", "SearchClient", "build_http_request"]

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
    if endpoint.engine != "solr":
        body = build_es_body(request)
        built = http.build_request(
            "POST", _es_search_url(endpoint.url), json=body, headers=headers, timeout=timeout
        )
    elif endpoint.method == "POST":
        form = str(httpx.QueryParams(tuple(build_solr_params(request))))
        headers["Content-Type"] = _FORM
        built = http.build_request("POST", url, content=form, headers=headers, timeout=timeout)
    else:
        full = url.copy_merge_params(tuple(build_solr_params(request)))
        built = http.build_request("GET", full, headers=headers, timeout=timeout)
    return built


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _snippet(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def _http_error(endpoint: EndpointConfig, response: httpx.Response) -> EngineError:
    body = _json(response)
    extract = solr_error_message if endpoint.engine == "solr" else es_error_message
    detail = extract(body) or _snippet(response) or response.reason_phrase
    message = f"HTTP {response.status_code} from {endpoint.safe_url}: {detail}"
    if response.status_code in RETRY_STATUSES:
        return EngineUnavailable(message)
    return EngineHTTPError(message, status_code=response.status_code)


def _parse(
    endpoint: EndpointConfig, response: httpx.Response, spec: FieldSpec, explain: bool
) -> SearchResult:
    body = _json(response)
    if body is None:
        raise EngineResponseError(
            f"response from {endpoint.safe_url} is not JSON: {_snippet(response)!r}"
        )
    if endpoint.engine == "solr":
        return parse_solr_response(body, spec, explain=explain)
    return parse_es_response(body, spec)


class SearchClient:
    """Runs searches through one shared ``httpx.AsyncClient`` with per-endpoint limits.

    Limits are kept per (engine, url, max_concurrency, requests_per_minute) and bound to
    the event loop of first use: create one SearchClient per run (per event loop).
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        attempts: int = 3,
        backoff_s: float = 0.2,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = http
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
        try:
            spec = parse_field_spec(request.field_spec)
            built = build_http_request(self._http, endpoint, request)
        except SearchError as exc:
            raise RequestBuildError(exc.message) from exc
        response = await self._send_with_retry(endpoint, built)
        if response.status_code >= 400:
            raise _http_error(endpoint, response)
        return _parse(endpoint, response, spec, request.explain)

    async def _send_with_retry(
        self, endpoint: EndpointConfig, built: httpx.Request
    ) -> httpx.Response:
        limits = self._limits_for(endpoint)
        for attempt in range(1, self._attempts + 1):
            last = attempt == self._attempts
            try:
                async with limits.slot():
                    response = await self._send(endpoint, built)
            except EngineUnavailable:
                if last:
                    raise
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
            await self._sleep(self._backoff_s * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _send(self, endpoint: EndpointConfig, built: httpx.Request) -> httpx.Response:
        where = endpoint.safe_url
        try:
            response = await self._http.send(built, auth=_auth(endpoint))
        except httpx.ConnectTimeout as exc:
            raise EngineUnavailable(f"timed out connecting to {where}") from exc
        except httpx.TimeoutException as exc:
            raise EngineTimeout(f"no answer from {where} within {endpoint.timeout_s:g} s") from exc
        except httpx.ConnectError as exc:
            raise EngineUnavailable(f"cannot connect to {where}: {exc}") from exc
        except httpx.HTTPError as exc:
            raise EngineUnavailable(f"request to {where} failed: {type(exc).__name__}") from exc
        return response
