"""A pull's side of the engine: page requests, the scroll, reading hits, the cursor.

An index is read in pages: a scroll sorted by `timestamp`, `page_size` hits a page, so
memory holds one page. The cursor of an (endpoint, index) is the latest timestamp stored
from it, in epoch milliseconds; a pull without `since` asks for records from it on.

Every request goes through the outbound client and policy that runs use
(``app.outbound.transport``, ``app.outbound.policy``), with the endpoint's headers, basic auth
and timeout; answers are read up to the policy's size cap.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from app.clicks import ingest
from app.errors import RelevoError
from app.outbound.policy import check_destination, current_policy
from app.search.types import EndpointConfig

__all__ = [
    "EngineClient",
    "Page",
    "PullFailed",
    "cursor_key",
    "cursor_time",
    "engine_base",
    "failure",
    "millis",
    "pages",
    "read_hits",
    "search_body",
]

# How long the engine keeps a scroll between two pages.
SCROLL = "2m"


class PullFailed(RelevoError):
    """The engine could not be read (unreachable, refused by policy, or an error answer)."""

    status_code = 502


def failure(exc: Exception, where: str) -> PullFailed:
    """Return the PullFailed that tells why a call to `where` raised (a policy refusal...)."""
    message = getattr(exc, "message", None) or f"cannot connect to {where}"
    return PullFailed(str(message))


def engine_base(url: str) -> httpx.URL:
    """Return the engine's root from an endpoint's URL (`http://host:9200/movies` → host)."""
    parsed = httpx.URL(url)
    parts = [p for p in parsed.path.split("/") if p]
    if parts and parts[-1] == "_search":
        parts.pop()
    if parts:  # the endpoint's own index
        parts.pop()
    return httpx.URL(
        scheme=parsed.scheme, host=parsed.host, port=parsed.port, path="/" + "/".join(parts)
    )


def _join(base: httpx.URL, *parts: str) -> httpx.URL:
    return base.copy_with(path=base.path.rstrip("/") + "/" + "/".join(parts))


class EngineClient:
    """Raw JSON requests to one endpoint's engine, guarded like every outbound call."""

    def __init__(self, http: httpx.AsyncClient, config: EndpointConfig) -> None:
        self._http = http
        self._config = config
        self._policy = current_policy()
        user, _, password = (config.basic_auth or "").partition(":")
        self._auth = httpx.BasicAuth(user, password) if config.basic_auth else None

    async def send(self, method: str, url: httpx.URL, body: Any) -> tuple[int, Any]:
        """Return the answer's status and JSON body; raise PullFailed when nothing came."""
        if self._config.secrets_error:
            raise PullFailed(self._config.secrets_error)
        try:
            status, content = await self._exchange(method, url, body)
        except RelevoError:
            raise
        except Exception as exc:
            raise self._failed(exc) from exc
        try:
            return status, orjson.loads(content) if content else None
        except orjson.JSONDecodeError as exc:
            raise PullFailed(f"{self._config.safe_url} answered {status} with no JSON") from exc

    async def _exchange(self, method: str, url: httpx.URL, body: Any) -> tuple[int, bytes]:
        await check_destination(self._policy, url, self._config.safe_url)
        headers = {**self._config.headers, "content-type": "application/json"}
        request = self._http.build_request(method, url, content=orjson.dumps(body), headers=headers)
        async with asyncio.timeout(self._config.timeout_s):
            response = await self._http.send(request, auth=self._auth, stream=True)
            try:
                return response.status_code, await self._read(response)
            finally:
                await response.aclose()

    def _failed(self, exc: Exception) -> PullFailed:
        where = self._config.safe_url
        if isinstance(exc, TimeoutError):
            return PullFailed(f"no answer from {where} within {self._config.timeout_s:g} s")
        if isinstance(exc, httpx.HTTPError):
            return PullFailed(f"cannot connect to {where}")
        return failure(exc, where)  # the policy's refusals (EngineUnavailable) and the like

    async def _read(self, response: httpx.Response) -> bytes:
        cap = self._policy.max_response_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise PullFailed(
                    f"an answer of {self._config.safe_url} is larger than {cap} bytes: "
                    "pull with a smaller page_size"
                )
            chunks.append(chunk)
        return b"".join(chunks)


def search_body(*, since_ms: int | None, until_ms: int | None, size: int) -> dict[str, Any]:
    """Return the search of an index's first page: the window's hits, oldest first."""
    stamp: dict[str, int] = {}
    if since_ms is not None:
        stamp["gte"] = since_ms
    if until_ms is not None:
        stamp["lt"] = until_ms
    return {
        "size": size,
        "query": {"range": {"timestamp": stamp}} if stamp else {"match_all": {}},
        "sort": [{"timestamp": {"order": "asc", "unmapped_type": "date"}}],
    }


def _reason(body: Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        causes = error.get("root_cause") or []
        first = causes[0] if causes and isinstance(causes[0], dict) else error
        return str(first.get("reason") or first.get("type") or error.get("type"))[:300]
    return str(error or body)[:300]


def _missing(body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") == "index_not_found_exception"


def _check_answer(index: str, status: int, answer: Any) -> None:
    if status >= 400 or not isinstance(answer, dict):
        raise PullFailed(f"{index}: the engine answered {status}: {_reason(answer)}")


async def pages(
    engine: EngineClient, base: httpx.URL, index: str, search: dict[str, Any]
) -> AsyncIterator[list[dict[str, Any]] | None]:
    """Yield the hits of a `search_body` a page at a time; None once if there is no index."""
    url = _join(base, index, "_search").copy_merge_params({"scroll": SCROLL})
    status, answer = await engine.send("POST", url, search)
    if status == 404 and _missing(answer):
        yield None
        return
    scroll_id: str | None = None
    try:
        while True:
            _check_answer(index, status, answer)
            scroll_id = answer.get("_scroll_id") or scroll_id
            hits = (answer.get("hits") or {}).get("hits") or []
            if not hits:
                return
            yield hits
            if scroll_id is None or len(hits) < search["size"]:
                return
            following = {"scroll": SCROLL, "scroll_id": scroll_id}
            status, answer = await engine.send("POST", _join(base, "_search", "scroll"), following)
    finally:
        if scroll_id is not None:
            await _clear(engine, base, scroll_id)


async def _clear(engine: EngineClient, base: httpx.URL, scroll_id: str) -> None:
    # The engine frees the scroll at once rather than when it expires.
    with contextlib.suppress(PullFailed):
        await engine.send("DELETE", _join(base, "_search", "scroll"), {"scroll_id": [scroll_id]})


@dataclass
class Page:
    """A page of hits read as an ingest reads records."""

    records: list[ingest.Record]
    # Each record's line → its hit's `_id`, to name a refused document.
    doc_ids: dict[int, str]
    # The newest timestamp among the hits, in epoch milliseconds (None if none has one).
    newest_ms: int | None


def read_hits(hits: list[Any], *, first_line: int) -> Page:
    """Return the hits as records numbered from `first_line`, with their ids and newest stamp."""
    page = Page(records=[], doc_ids={}, newest_ms=None)
    for line, hit in enumerate(hits, start=first_line):
        source = hit.get("_source") if isinstance(hit, dict) else None
        page.doc_ids[line] = str(hit.get("_id", "")) if isinstance(hit, dict) else ""
        page.records.append(ingest.Record(line=line, value=source))
        stamp = _stamp_ms(source)
        if stamp is not None and (page.newest_ms is None or stamp > page.newest_ms):
            page.newest_ms = stamp
    return page


def millis(value: datetime | None) -> int | None:
    """Return a time in epoch milliseconds (a naive one is UTC), None for None."""
    if value is None:
        return None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def _stamp_ms(source: Any) -> int | None:
    try:
        stamp = source.get("timestamp") if isinstance(source, dict) else None
        return None if stamp is None else millis(ingest.parse_timestamp(stamp))
    except ingest.BadRecord:
        return None


def cursor_key(search_endpoint_id: int, index: str) -> str:
    """Return the key of an endpoint's index among a log's pull cursors."""
    return f"{search_endpoint_id}:{index}"


def cursor_time(cursor_ms: int) -> datetime:
    """Return a cursor (epoch milliseconds) as a UTC time."""
    return datetime.fromtimestamp(cursor_ms / 1000, tz=UTC)
