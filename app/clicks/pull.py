"""Pull UBI records from an OpenSearch or Elasticsearch endpoint's `ubi_queries` and `ubi_events`.

A pull reads each index in pages (``pull_paging``: the engine's side), stores each page as
an ingest does (idempotent: a record already stored is skipped) and remembers, per endpoint
and index, the latest timestamp it stored. The next pull without `since` asks only for
records from that timestamp on: the records of that very millisecond come again and are
counted as duplicates, nothing is missed or stored twice. A pull that breaks off keeps what
it stored and its cursor; pulling again resumes. A record indexed later with a timestamp
older than the cursor is not seen (give `since`).

A pull is a job: the request checks it (``pull_checks``), records it on the log's
`last_pull` ("queued") and answers at once; after the request commits, the pull runs on a
worker (PostgreSQL's job queue, task ``PULL_TASK``) or in this process (SQLite). It commits
each page with its cursor and its progress, and ends "finished" or "failed". A log has one
pull under way at a time; one silent for ``PULL_STALE_S`` counts as abandoned.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import httpx
import pydantic
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from app.clicks import pull_paging, service
from app.clicks.pull_checks import check_request
from app.clicks.pull_paging import EngineClient, PullFailed, cursor_time, millis
from app.clicks.schemas import MAX_REFUSED, IngestResult, PullBody, PulledIndex, PullResult
from app.db import after_commit, session_scope
from app.endpoints.service import engine_config
from app.errors import Conflict
from app.jobs.registry import Deferrer
from app.models import ClickLog, SearchEndpoint
from app.models.base import utcnow
from app.outbound.transport import engine_http_client
from app.search.types import EndpointConfig

__all__ = [
    "PULL_STALE_S",
    "PULL_TASK",
    "PullFailed",
    "PullManager",
    "current_pull",
    "execute_pull",
    "launch",
    "launch_after_commit",
    "run_in_thread",
    "start",
    "under_way",
]

logger = logging.getLogger(__name__)
# A pull is one job: it reads page after page until its indexes are read.
PULL_TASK = "relevo.click_pull"
# A queued or running pull that made no progress for this long is taken as abandoned (its
# process stopped): another pull of the log may start, and the old one stops if it wakes.
PULL_STALE_S = 300
UNDER_WAY = ("queued", "running")


# The pull's state, kept on its log.


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


# Starting a pull: the request's part.


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
    check_request(endpoint=endpoint, body=body)
    _lock(session, log)
    _refuse_if_under_way(log)
    state = _queued_state(endpoint, body, poll_url)
    _save(log, state)
    session.flush()
    return state


def _queued_state(endpoint: SearchEndpoint, body: PullBody, poll_url: str | None) -> PullResult:
    return PullResult(
        id=uuid.uuid4().hex,
        status="queued",
        search_endpoint_id=endpoint.id,
        at=utcnow(),
        queries=PulledIndex(index=body.queries_index),
        events=PulledIndex(index=body.events_index),
        poll_url=poll_url,
        request=body,
    )


def _lock(session: Session, log: ClickLog) -> None:
    # Writing the row first holds its lock (PostgreSQL) or the database's write lock
    # (SQLite) to the end of the request: two pulls started at once are seen one by one.
    session.execute(
        update(ClickLog)
        .where(ClickLog.id == log.id)
        .values(id=ClickLog.id)
        .execution_options(synchronize_session=False)
    )
    session.refresh(log)


def _refuse_if_under_way(log: ClickLog) -> None:
    running = current_pull(log)
    if running is not None and under_way(running):
        raise Conflict(
            f"A pull of this click log is {running.status} (started "
            f"{_aware(running.at).isoformat(timespec='seconds')}); wait for it to end."
        )


# The job: reading the indexes page by page.


def execute_pull(
    session_factory: sessionmaker[Session], *, click_log_id: int, pull_id: str
) -> None:
    """Do a queued pull to its end (blocking: call it in a thread, not in an event loop).

    A pull that is not the log's queued one (done already, superseded) is left alone.
    """
    with session_scope(session_factory) as session:
        queued = _queued(session, click_log_id, pull_id)
        if queued is None:
            return
        log, state = queued
        state.status = "running"
        _touch(log, state)
        session.commit()
        endpoint = session.get(SearchEndpoint, state.search_endpoint_id)
        try:
            _run(session, log, endpoint, state, click_log_id=click_log_id)
            _check_still_ours(session, click_log_id, pull_id)
        except _Superseded:
            return
        state.finished_at = state.updated_at = utcnow()
        _save(log, state)


def _queued(
    session: Session, click_log_id: int, pull_id: str
) -> tuple[ClickLog, PullResult] | None:
    log = session.get(ClickLog, click_log_id)
    state = None if log is None else current_pull(log)
    if log is None or state is None or state.id != pull_id or state.status != "queued":
        return None
    return log, state


def _touch(log: ClickLog, state: PullResult) -> None:
    state.updated_at = utcnow()
    _save(log, state)


def _run(
    session: Session,
    log: ClickLog,
    endpoint: SearchEndpoint | None,
    state: PullResult,
    *,
    click_log_id: int,
) -> None:
    """Read the indexes and mark the pull finished, or failed with why; what it committed stays."""
    try:
        if endpoint is None:
            raise PullFailed("its search endpoint was deleted")
        asyncio.run(_pull(session, log, engine_config(endpoint), state))
        state.status = "finished"
    except _Superseded:
        session.rollback()
        raise
    except PullFailed as exc:
        _fail(session, state, exc.message)
    except Exception:
        logger.exception("pull %s of click log %s failed", state.id, click_log_id)
        _fail(session, state, "an internal error")


def _fail(session: Session, state: PullResult, message: str) -> None:
    session.rollback()
    stored = state.queries.stored + state.events.stored
    state.status = "failed"
    state.error = (
        f"{message} ({stored} records were stored before it stopped; pull again to resume)"
    )


async def _pull(session: Session, log: ClickLog, config: EndpointConfig, state: PullResult) -> None:
    body = state.request
    assert body is not None
    base = pull_paging.engine_base(config.url)
    indexes: tuple[tuple[service.Kind, str, PulledIndex], ...] = (
        ("queries", body.queries_index, state.queries),
        ("events", body.events_index, state.events),
    )
    async with engine_http_client() as http:
        engine = EngineClient(http, config)
        for kind, index, found in indexes:
            index_pull = _IndexPull(session, log, state, kind=kind, index=index, found=found)
            await index_pull.read(engine, base)


@dataclass
class _IndexPull:
    """One index's part of a pull: its pages stored, its cursor moved, its counts kept."""

    session: Session
    log: ClickLog
    state: PullResult
    kind: service.Kind
    index: str
    found: PulledIndex

    async def read(self, engine: EngineClient, base: httpx.URL) -> None:
        """Store the index's pages one by one, each committed with the cursor and progress."""
        body = self.state.request
        assert body is not None
        key = pull_paging.cursor_key(body.search_endpoint_id, self.index)
        cursor = self.log.pull_cursors.get(key)
        since_ms = millis(body.since) if body.since is not None else cursor
        search = pull_paging.search_body(
            since_ms=since_ms, until_ms=millis(body.until), size=body.page_size
        )
        pages = pull_paging.pages(engine, base, self.index, search)
        async for hits in pages:
            if hits is None:
                self.found.missing = True
                return
            cursor = self._advance(key, cursor, self._store(hits))
            # The page, the cursor and the progress are committed together.
            _check_still_ours(self.session, self.log.id, self.state.id)
            _touch(self.log, self.state)
            self.session.commit()
        if cursor is not None:
            self.found.cursor = cursor_time(cursor)

    def _store(self, hits: list[dict[str, Any]]) -> int | None:
        """Store a page as an ingest does and count it; return its newest timestamp."""
        found = self.found
        found.pages += 1
        page = pull_paging.read_hits(hits, first_line=found.fetched + 1)
        found.fetched += len(hits)
        # A page is stored (and committed) before the next is asked for: one page in memory.
        stored = service.ingest_records(
            session=self.session, log=self.log, kind=self.kind, records=page.records
        )
        self._count(stored, page.doc_ids)
        return page.newest_ms

    def _count(self, stored: IngestResult, doc_ids: dict[int, str]) -> None:
        found = self.found
        found.stored += stored.stored
        found.duplicates += stored.duplicates
        found.refused_count += stored.refused_count
        for refusal in stored.refused[: MAX_REFUSED - len(found.refused)]:
            document = doc_ids.get(refusal.line, "?")
            refusal.message = f"{self.index} document {document}: {refusal.message}"
            found.refused.append(refusal)

    def _advance(self, key: str, cursor: int | None, newest: int | None) -> int | None:
        """Move the cursor to the page's newest timestamp if that is later; return the cursor."""
        if newest is not None and (cursor is None or newest > cursor):
            cursor = newest
            self.log.pull_cursors = {**self.log.pull_cursors, key: newest}
        if cursor is not None:
            self.found.cursor = cursor_time(cursor)
        return cursor


# Launching the job: on the queue's workers or in this process.


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
