"""Pull UBI records from an OpenSearch or Elasticsearch endpoint's `ubi_queries` and `ubi_events`.

A pull reads each index in pages (a scroll sorted by `timestamp`, `page_size` hits a page,
so memory holds one page), stores each page as an ingest does (idempotent: a record already
stored is skipped) and remembers, per endpoint and index, the latest timestamp it stored.
The next pull without `since` asks only for records from that timestamp on: the records of
that very millisecond come again and are counted as duplicates, nothing is missed or stored
twice. A pull that breaks off keeps what it stored and its cursor; pulling again resumes.
A record indexed later with a timestamp older than the cursor is not seen (give `since`).

A pull is a job: the request checks it (an endpoint of OpenSearch or Elasticsearch the
caller may use, a destination the outbound policy allows), records it on the log's
`last_pull` ("queued") and answers at once; after the request commits, the pull runs on a
worker (PostgreSQL's job queue, task ``PULL_TASK``) or in this process (SQLite). It commits
each page with its cursor and its progress, and ends "finished" or "failed". A log has one
pull under way at a time; one silent for ``PULL_STALE_S`` counts as abandoned.

Every request goes through the outbound client and policy that runs use
(``app.outbound.transport``, ``app.outbound.policy``), with the endpoint's headers, basic auth
and timeout; answers are read up to the policy's size cap.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import httpx
import orjson
import pydantic
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from app.clicks import ingest, service
from app.clicks.schemas import MAX_REFUSED, PullBody, PulledIndex, PullResult
from app.db import after_commit, session_scope
from app.endpoints.service import engine_config
from app.errors import Conflict, Invalid, RelevoError
from app.jobs.registry import Deferrer
from app.models import ClickLog, SearchEndpoint
from app.models.base import utcnow
from app.outbound.policy import check_destination, current_policy
from app.outbound.transport import engine_http_client
from app.search.engines import ADAPTERS
from app.search.models import EndpointConfig

__all__ = [
    "PULL_STALE_S",
    "PULL_TASK",
    "PullFailed",
    "PullManager",
    "current_pull",
    "engine_base",
    "execute_pull",
    "launch",
    "launch_after_commit",
    "run_in_thread",
    "start",
    "under_way",
]

logger = logging.getLogger(__name__)
PULL_ENGINES = tuple(engine for engine, adapter in ADAPTERS.items() if adapter.holds_ubi_logs)
SCROLL = "2m"
# A pull is one job: it reads page after page until its indexes are read.
PULL_TASK = "relevo.click_pull"
# A queued or running pull that made no progress for this long is taken as abandoned (its
# process stopped): another pull of the log may start, and the old one stops if it wakes.
PULL_STALE_S = 300
UNDER_WAY = ("queued", "running")


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
    state: PullResult,
    found: PulledIndex,
) -> None:
    body = state.request
    assert body is not None
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
        if cursor is not None:
            found.cursor = datetime.fromtimestamp(cursor / 1000, tz=UTC)
        # The page, the cursor and the progress are committed together.
        _check_still_ours(session, log.id, state.id)
        state.updated_at = utcnow()
        _save(log, state)
        session.commit()
    if cursor is not None:
        found.cursor = datetime.fromtimestamp(cursor / 1000, tz=UTC)


async def _pull(session: Session, log: ClickLog, config: EndpointConfig, state: PullResult) -> None:
    body = state.request
    assert body is not None
    base = engine_base(config.url)
    async with engine_http_client() as http:
        engine = _Engine(http, config)
        for kind, index, found in (
            ("queries", body.queries_index, state.queries),
            ("events", body.events_index, state.events),
        ):
            await _pull_index(
                session=session,
                log=log,
                engine=engine,
                base=base,
                kind=kind,  # type: ignore[arg-type]
                index=index,
                key=f"{body.search_endpoint_id}:{index}",
                state=state,
                found=found,
            )


class _Superseded(Exception):
    """Another pull of the log started (this one was taken as abandoned): stop quietly."""


def _check_still_ours(session: Session, click_log_id: int, pull_id: str) -> None:
    stored = session.scalar(select(ClickLog.last_pull).where(ClickLog.id == click_log_id))
    if not isinstance(stored, dict) or stored.get("id") != pull_id:
        raise _Superseded


def _save(log: ClickLog, state: PullResult) -> None:
    log.last_pull = state.model_dump(mode="json")


def current_pull(log: ClickLog) -> PullResult | None:
    """Return the log's last (or current) pull, or None if it was never pulled."""
    if not log.last_pull:
        return None
    try:
        return PullResult.model_validate(log.last_pull)
    except pydantic.ValidationError:  # written by an older version: shown as it is
        return None


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def under_way(state: PullResult | None) -> bool:
    """Whether the pull is queued or running (and not abandoned)."""
    if state is None or state.status not in UNDER_WAY:
        return False
    heard = _aware(state.updated_at or state.at)
    return utcnow() - heard < timedelta(seconds=PULL_STALE_S)


def _check(endpoint: SearchEndpoint, body: PullBody) -> EndpointConfig:
    if endpoint.engine not in PULL_ENGINES:
        raise Invalid(
            "search_endpoint_id",
            f"a pull reads OpenSearch or Elasticsearch indexes; this endpoint is {endpoint.engine}",
        )
    if body.since is not None and body.until is not None and body.until <= body.since:
        raise Invalid("until", "until must be after since")
    config = engine_config(endpoint)
    if config.secrets_error:
        raise PullFailed(config.secrets_error)
    try:
        asyncio.run(check_destination(current_policy(), engine_base(config.url), config.safe_url))
    except RelevoError as exc:
        raise PullFailed(exc.message) from exc
    except Exception as exc:  # the policy's refusals (Unreachable) and the like
        message = getattr(exc, "message", None) or f"cannot connect to {config.safe_url}"
        raise PullFailed(str(message)) from exc
    return config


def start(
    *,
    session: Session,
    log: ClickLog,
    endpoint: SearchEndpoint,
    body: PullBody,
    poll_url: str | None = None,
) -> PullResult:
    """Check a pull and record it, queued, on the log; 409 if one is under way.

    Call it from a worker thread (the policy's check resolves the engine's host). The
    caller launches the job once the request commits (``launch_after_commit``).
    """
    _check(endpoint, body)
    # Writing the row first holds its lock (PostgreSQL) or the database's write lock
    # (SQLite) to the end of the request: two pulls started at once are seen one by one.
    session.execute(
        update(ClickLog)
        .where(ClickLog.id == log.id)
        .values(id=ClickLog.id)
        .execution_options(synchronize_session=False)
    )
    session.refresh(log)
    running = current_pull(log)
    if running is not None and under_way(running):
        raise Conflict(
            f"A pull of this click log is {running.status} (started "
            f"{_aware(running.at).isoformat(timespec='seconds')}); wait for it to end."
        )
    state = PullResult(
        id=uuid.uuid4().hex,
        status="queued",
        search_endpoint_id=endpoint.id,
        at=utcnow(),
        queries=PulledIndex(index=body.queries_index),
        events=PulledIndex(index=body.events_index),
        poll_url=poll_url,
        request=body,
    )
    _save(log, state)
    session.flush()
    return state


def execute_pull(
    session_factory: sessionmaker[Session], *, click_log_id: int, pull_id: str
) -> None:
    """Do a queued pull to its end (blocking: call it in a thread, not in an event loop).

    A pull that is not the log's queued one (done already, superseded) is left alone.
    """
    with session_scope(session_factory) as session:
        log = session.get(ClickLog, click_log_id)
        state = None if log is None else current_pull(log)
        if log is None or state is None or state.id != pull_id or state.status != "queued":
            return
        state.status = "running"
        state.updated_at = utcnow()
        _save(log, state)
        session.commit()
        endpoint = session.get(SearchEndpoint, state.search_endpoint_id)
        try:
            if endpoint is None:
                raise PullFailed("its search endpoint was deleted")
            asyncio.run(_pull(session, log, engine_config(endpoint), state))
            state.status = "finished"
        except _Superseded:
            session.rollback()
            return
        except PullFailed as exc:
            session.rollback()
            state.status, state.error = "failed", _failure(state, exc.message)
        except Exception:
            logger.exception("pull %s of click log %s failed", pull_id, click_log_id)
            session.rollback()
            state.status, state.error = "failed", _failure(state, "an internal error")
        try:
            _check_still_ours(session, click_log_id, pull_id)
        except _Superseded:
            return
        state.finished_at = state.updated_at = utcnow()
        _save(log, state)


def _failure(state: PullResult, message: str) -> str:
    stored = state.queries.stored + state.events.stored
    return f"{message} ({stored} records were stored before it stopped; pull again to resume)"


class PullQueue(Protocol):
    """The run manager's queue, as far as pulls use it: its job queue."""

    @property
    def jobs(self) -> Deferrer: ...


class PullManager(Protocol):
    """The run manager, as far as pulls use it (app.runs.manager.RunManager provides it)."""

    @property
    def queue(self) -> PullQueue | None: ...

    @property
    def session_factory(self) -> sessionmaker[Session]: ...

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]: ...


async def run_in_thread(
    session_factory: sessionmaker[Session], *, click_log_id: int, pull_id: str
) -> None:
    """Do the pull in a thread of its own (its database work blocks), awaiting its end."""
    await asyncio.to_thread(
        execute_pull, session_factory, click_log_id=click_log_id, pull_id=pull_id
    )


def launch(
    *, manager: PullManager, click_log_id: int, pull_id: str
) -> concurrent.futures.Future[None]:
    """Start a queued pull: put it in the job queue, or do it in this process."""
    queue = manager.queue
    if queue is not None:

        async def enqueue() -> None:
            await queue.jobs.defer(PULL_TASK, click_log_id=click_log_id, pull_id=pull_id)

        return manager.spawn(enqueue)

    async def work() -> None:
        await run_in_thread(manager.session_factory, click_log_id=click_log_id, pull_id=pull_id)

    return manager.spawn(work)


def launch_after_commit(
    session: Session, manager: PullManager, *, click_log_id: int, pull_id: str
) -> None:
    """Launch the pull once the request has committed it (its job reads it elsewhere)."""
    after_commit(
        session, lambda: launch(manager=manager, click_log_id=click_log_id, pull_id=pull_id)
    )
