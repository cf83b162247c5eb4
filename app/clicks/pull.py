"""Pull UBI records from an OpenSearch or Elasticsearch endpoint's `ubi_queries` and `ubi_events`.

A pull reads each index in pages (a scroll sorted by `timestamp`, `page_size` hits a page,
so memory holds one page), stores each page as an ingest does (idempotent: a record already
stored is skipped) and remembers, per endpoint and index, the latest timestamp it stored.
The next pull without `since` asks only for records from that timestamp on: the records of
that very millisecond come again and are counted as duplicates, nothing is missed or stored
twice. A pull that breaks off keeps what it stored and its cursor; pulling again resumes.
A record indexed later with a timestamp older than the cursor is not seen (give `since`).

Every request goes through the outbound client and policy that runs use
(``app.outbound.transport``, ``app.outbound.policy``), with the endpoint's headers, basic auth
and timeout; answers are read up to the policy's size cap.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
from sqlalchemy.orm import Session

from app.clicks import ingest, service
from app.clicks.schemas import MAX_REFUSED, PullBody, PulledIndex, PullResult
from app.endpoints.service import engine_config
from app.errors import Invalid, RelevoError
from app.models import ClickLog, SearchEndpoint
from app.models.base import utcnow
from app.outbound.policy import check_destination, current_policy
from app.outbound.transport import engine_http_client
from app.search.models import EndpointConfig
from app.vocabulary import Engine

__all__ = ["PullFailed", "engine_base", "pull"]

PULL_ENGINES = (Engine.OPENSEARCH, Engine.ELASTICSEARCH)
SCROLL = "2m"


class PullFailed(RelevoError):
    """The engine could not be read (unreachable, refused by policy, or an error answer)."""

    status_code = 502


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


class _Engine:
    """Raw JSON requests to one endpoint's engine, guarded like every outbound call."""

    def __init__(self, http: httpx.AsyncClient, config: EndpointConfig) -> None:
        self._http = http
        self._config = config
        self._policy = current_policy()
        user, _, password = (config.basic_auth or "").partition(":")
        self._auth = httpx.BasicAuth(user, password) if config.basic_auth else None

    async def send(self, method: str, url: httpx.URL, body: Any) -> tuple[int, Any]:
        """Return the answer's status and JSON body; raise PullFailed when nothing came."""
        where = self._config.safe_url
        if self._config.secrets_error:
            raise PullFailed(self._config.secrets_error)
        try:
            await check_destination(self._policy, url, where)
            headers = {**self._config.headers, "content-type": "application/json"}
            request = self._http.build_request(
                method, url, content=orjson.dumps(body), headers=headers
            )
            async with asyncio.timeout(self._config.timeout_s):
                response = await self._http.send(request, auth=self._auth, stream=True)
                try:
                    content = await self._read(response)
                finally:
                    await response.aclose()
        except RelevoError:
            raise
        except TimeoutError as exc:
            raise PullFailed(f"no answer from {where} within {self._config.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise PullFailed(f"cannot connect to {where}") from exc
        except Exception as exc:  # the policy's refusals (EngineUnavailable) and the like
            message = getattr(exc, "message", None) or f"cannot connect to {where}"
            raise PullFailed(str(message)) from exc
        try:
            return response.status_code, orjson.loads(content) if content else None
        except orjson.JSONDecodeError as exc:
            raise PullFailed(f"{where} answered {response.status_code} with no JSON") from exc

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


async def _pages(
    engine: _Engine,
    base: httpx.URL,
    index: str,
    *,
    since_ms: int | None,
    until_ms: int | None,
    size: int,
) -> AsyncIterator[list[dict[str, Any]] | None]:
    """Yield the index's hits a page at a time, oldest first; None once if there is no index."""
    stamp: dict[str, int] = {}
    if since_ms is not None:
        stamp["gte"] = since_ms
    if until_ms is not None:
        stamp["lt"] = until_ms
    query = {"range": {"timestamp": stamp}} if stamp else {"match_all": {}}
    body = {
        "size": size,
        "query": query,
        "sort": [{"timestamp": {"order": "asc", "unmapped_type": "date"}}],
    }
    search = _join(base, index, "_search").copy_merge_params({"scroll": SCROLL})
    status, answer = await engine.send("POST", search, body)
    if status == 404 and _missing(answer):
        yield None
        return
    scroll_id: str | None = None
    try:
        while True:
            if status >= 400 or not isinstance(answer, dict):
                raise PullFailed(f"{index}: the engine answered {status}: {_reason(answer)}")
            scroll_id = answer.get("_scroll_id") or scroll_id
            hits = (answer.get("hits") or {}).get("hits") or []
            if not hits:
                return
            yield hits
            if scroll_id is None or len(hits) < size:
                return
            status, answer = await engine.send(
                "POST", _join(base, "_search", "scroll"), {"scroll": SCROLL, "scroll_id": scroll_id}
            )
    finally:
        if scroll_id is not None:
            # The engine frees the scroll at once rather than when it expires.
            with contextlib.suppress(PullFailed):
                await engine.send(
                    "DELETE", _join(base, "_search", "scroll"), {"scroll_id": [scroll_id]}
                )


def _millis(value: datetime | None) -> int | None:
    if value is None:
        return None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def _stamp_ms(source: Any) -> int | None:
    try:
        stamp = source.get("timestamp") if isinstance(source, dict) else None
        return None if stamp is None else _millis(ingest.parse_timestamp(stamp))
    except ingest.BadRecord:
        return None


async def _pull_index(
    *,
    session: Session,
    log: ClickLog,
    engine: _Engine,
    base: httpx.URL,
    kind: service.Kind,
    index: str,
    key: str,
    body: PullBody,
    found: PulledIndex,
) -> None:
    cursor = log.pull_cursors.get(key)
    since_ms = _millis(body.since) if body.since is not None else cursor
    pages = _pages(
        engine, base, index, since_ms=since_ms, until_ms=_millis(body.until), size=body.page_size
    )
    async for hits in pages:
        if hits is None:
            found.missing = True
            return
        found.pages += 1
        ids: dict[int, str] = {}
        records = []
        latest = cursor
        for hit in hits:
            found.fetched += 1
            source = hit.get("_source") if isinstance(hit, dict) else None
            ids[found.fetched] = str(hit.get("_id", "")) if isinstance(hit, dict) else ""
            records.append(ingest.Record(line=found.fetched, value=source))
            stamp = _stamp_ms(source)
            if stamp is not None and (latest is None or stamp > latest):
                latest = stamp
        # A page is stored (and committed) before the next is asked for: one page in memory.
        stored = service.ingest_records(session=session, log=log, kind=kind, records=records)
        found.stored += stored.stored
        found.duplicates += stored.duplicates
        found.refused_count += stored.refused_count
        for refusal in stored.refused[: MAX_REFUSED - len(found.refused)]:
            refusal.message = f"{index} document {ids.get(refusal.line, '?')}: {refusal.message}"
            found.refused.append(refusal)
        if latest is not None and latest != cursor:
            cursor = latest
            log.pull_cursors = {**log.pull_cursors, key: latest}
            session.commit()
    if cursor is not None:
        found.cursor = datetime.fromtimestamp(cursor / 1000, tz=UTC)


async def _pull(
    session: Session, log: ClickLog, config: EndpointConfig, body: PullBody, result: PullResult
) -> None:
    base = engine_base(config.url)
    async with engine_http_client() as http:
        engine = _Engine(http, config)
        for kind, index, found in (
            ("queries", body.queries_index, result.queries),
            ("events", body.events_index, result.events),
        ):
            await _pull_index(
                session=session,
                log=log,
                engine=engine,
                base=base,
                kind=kind,  # type: ignore[arg-type]
                index=index,
                key=f"{body.search_endpoint_id}:{index}",
                body=body,
                found=found,
            )


def pull(
    *, session: Session, log: ClickLog, endpoint: SearchEndpoint, body: PullBody
) -> PullResult:
    """Read the endpoint's UBI indexes into the log, from each one's cursor (or `since`) on.

    Runs at once, in its own event loop (call it from a worker thread, not from a loop).
    A failure keeps what was stored and answers 502 saying what went wrong; the log's
    `last_pull` records every pull's outcome either way.
    """
    if endpoint.engine not in PULL_ENGINES:
        raise Invalid(
            "search_endpoint_id",
            f"a pull reads OpenSearch or Elasticsearch indexes; this endpoint is {endpoint.engine}",
        )
    if body.since is not None and body.until is not None and body.until <= body.since:
        raise Invalid("until", "until must be after since")
    result = PullResult(
        search_endpoint_id=endpoint.id,
        at=utcnow(),
        queries=PulledIndex(index=body.queries_index),
        events=PulledIndex(index=body.events_index),
    )
    config = engine_config(endpoint)
    try:
        asyncio.run(_pull(session, log, config, body, result))
    except PullFailed as exc:
        session.rollback()
        result.status, result.error = "failed", exc.message
    log.last_pull = result.model_dump(
        mode="json", exclude={"queries": {"refused"}, "events": {"refused"}}
    )
    session.commit()
    if result.error is not None:
        stored = result.queries.stored + result.events.stored
        raise PullFailed(
            f"{result.error} ({stored} records were stored before it stopped; pull again to resume)"
        )
    return result
