"""Where a judge run executes: a job for workers (PostgreSQL queue) or this process (SQLite).

Like case runs: with a job queue the web tier only puts the run in it; without one the
run's coroutine runs in the run manager's event loop, with the manager's judge client,
whose limits the judge's trials share.
"""

from __future__ import annotations

import concurrent.futures
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import httpx
from sqlalchemy.orm import Session, sessionmaker

from app.db import after_commit
from app.jobs.registry import Deferrer, Resource
from app.judges import run_pairs, run_views, runs, service
from app.judges.client import JudgeClient
from app.judges.runner import execute_judge_run
from app.judges.schemas import JudgeRunCreate, JudgeRunEstimate, JudgeRunRead
from app.models import Book, JudgeRun, User

__all__ = [
    "JUDGE_MANAGER",
    "JUDGE_TASK",
    "JudgeQueue",
    "JudgeRunManager",
    "estimate",
    "judge_client_of",
    "launch",
    "resume",
    "retry_failed",
    "run_in_process",
    "start",
]


# A judge run is one job: a judge has one run under way at a time, held by one worker.
JUDGE_TASK = "relevo.judge_run"


class JudgeQueue(Protocol):
    """The run manager's queue, as far as judge runs use it: its job queue."""

    @property
    def jobs(self) -> Deferrer: ...


class JudgeRunManager(Protocol):
    """The run manager, as far as judge runs use it."""

    @property
    def queue(self) -> JudgeQueue | None: ...

    @property
    def session_factory(self) -> sessionmaker[Session]: ...

    def spawn(
        self, work: Callable[[], Coroutine[Any, Any, None]]
    ) -> concurrent.futures.Future[None]: ...

    def http_client(self) -> httpx.AsyncClient:
        """The process's client for outbound calls (in the manager's loop)."""
        ...


_clients: weakref.WeakKeyDictionary[JudgeRunManager, JudgeClient] = weakref.WeakKeyDictionary()


def judge_client_of(manager: JudgeRunManager) -> JudgeClient:
    """Return the process's one judge client, on its run manager's HTTP client: judge runs
    here and every trial share its limits (called in the manager's loop, where they run)."""
    client = _clients.get(manager)
    if client is None:
        client = _clients[manager] = JudgeClient(manager.http_client())
    return client


# Without a queue, the run manager judge runs left by a stopped process resume in.
JUDGE_MANAGER: Resource[JudgeRunManager] = Resource("judge run manager")


async def run_in_process(
    *, session_factory: sessionmaker[Session], run_id: int, client: JudgeClient
) -> None:
    """Execute one judge run here, with the process's judge client (and so its limits)."""
    await execute_judge_run(session_factory=session_factory, run_id=run_id, client=client)


def launch(
    *, manager: Any, session_factory: sessionmaker[Session], run_id: int
) -> concurrent.futures.Future[None]:
    """Start a queued judge run from a request thread (queue it, or run it in-process)."""
    queue = manager.queue
    if queue is not None:

        async def enqueue() -> None:
            await queue.jobs.defer(JUDGE_TASK, run_id=run_id)

        future: concurrent.futures.Future[None] = manager.spawn(enqueue)
        return future

    async def work() -> None:
        await run_in_process(
            session_factory=session_factory, run_id=run_id, client=judge_client_of(manager)
        )

    started: concurrent.futures.Future[None] = manager.spawn(work)
    return started


def estimate(*, session: Session, user: User, book: Book, body: JudgeRunCreate) -> JudgeRunEstimate:
    """Return what a judge run of the book would ask and cost; nothing is sent or stored."""
    judge = service.get_judge_for_book(session=session, user=user, judge_id=body.judge_id)
    return run_pairs.estimate(session=session, book=book, judge=judge, body=body)


def start(
    *, session: Session, manager: JudgeRunManager, user: User, book: Book, body: JudgeRunCreate
) -> JudgeRunRead:
    """Create a judge run of the book and start it; return it as it was created."""
    judge = service.get_judge_for_book(session=session, user=user, judge_id=body.judge_id)
    run = runs.create_run(session=session, book=book, judge=judge, user=user, body=body)
    read = run_views.to_read(session=session, run=run, judge_name=judge.name)
    _launch_after_commit(session, manager, run.id)
    return read


def retry_failed(
    *, session: Session, manager: JudgeRunManager, user: User, book: Book, run: JudgeRun
) -> JudgeRunRead:
    """Start a new run of the same judge over the pairs this run failed."""
    body = JudgeRunCreate(judge_id=run.judge_id, pairs="failed")
    return start(session=session, manager=manager, user=user, book=book, body=body)


def resume(*, session: Session, manager: JudgeRunManager, run: JudgeRun) -> JudgeRunRead:
    """Resume a paused judge run (only the pairs it has not done) and start it again."""
    resumed = runs.resume_run(session=session, run=run)
    read = run_views.to_read(session=session, run=resumed)
    _launch_after_commit(session, manager, resumed.id)
    return read


def _launch_after_commit(session: Session, manager: JudgeRunManager, run_id: int) -> None:
    """Launch the run once the request has committed it (its runner reads it elsewhere)."""
    after_commit(
        session,
        lambda: launch(manager=manager, session_factory=manager.session_factory, run_id=run_id),
    )
