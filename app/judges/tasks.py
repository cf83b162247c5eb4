"""The judges' jobs: a judge run on a worker, and resuming runs left by a stopped process.

A judge run holds its worker slot for as long as the model takes, so runs of different
users share the slots: a worker executes at most concurrency - 1 judge runs at once (one
slot is always left to case runs' chunks), and one user has at most ``JUDGE_RUNS_PER_USER``
judge runs executing across all workers. A judge-run job over either limit goes back to the
queue for ``JUDGE_RETRY_S``, freeing its slot (and letting older jobs of other users go
first).
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.jobs.registry import MINUTE, Job, Resource, register_task
from app.judges import runs as judge_runs
from app.judges.client import JudgeClient
from app.judges.launch import JUDGE_MANAGER, JUDGE_TASK, launch
from app.judges.runner import execute_judge_run

__all__ = ["JUDGES", "JudgeSlots", "judge_run", "register", "resume_stale"]

log = logging.getLogger(__name__)
JUDGE_RUNS_PER_USER = 2
JUDGE_RETRY_S = 2


class JudgeSlots:
    """A worker's one judge client for all its judge runs (whose limits they then share),
    and how many of them it executes at once."""

    def __init__(self, client: JudgeClient, *, slots: int | None = None) -> None:
        self.client = client
        self.slots = slots  # None: no limit of the worker's own
        self.executing = 0

    def take(self) -> bool:
        """Count one more judge run executing here; False when the worker has its fill."""
        if self.slots is not None and self.executing >= self.slots:
            return False
        self.executing += 1
        return True

    def give(self) -> None:
        self.executing -= 1


JUDGES: Resource[JudgeSlots] = Resource("judge client")


def _user_has_room(factory: sessionmaker[Session], run_id: int) -> bool:
    with session_scope(factory) as session:
        return judge_runs.owner_has_room(
            session=session, run_id=run_id, per_user=JUDGE_RUNS_PER_USER
        )


async def judge_run(job: Job, *, run_id: int) -> None:
    """Execute a judge run, or put it back for a while if the worker or its user is full."""
    judges = job.resources.get(JUDGES)
    if not judges.take():
        await _later(job, run_id)
        return
    try:
        if not await asyncio.to_thread(_user_has_room, job.session_factory, run_id):
            await _later(job, run_id)
            return
        await execute_judge_run(
            session_factory=job.session_factory, run_id=run_id, client=judges.client
        )
    finally:
        judges.give()


async def _later(job: Job, run_id: int) -> None:
    assert job.queue is not None
    await job.queue.defer_in(JUDGE_TASK, JUDGE_RETRY_S, run_id=run_id)


async def resume_stale(job: Job) -> None:
    """Resume the judge runs whose process went silent (no heartbeat for a minute)."""
    with job.session_factory() as session:
        resumed = judge_runs.resume_stale_runs(session=session)
    for run_id in resumed:
        log.info("resuming judge run %s, left by a process that stopped", run_id)
        if job.queue is not None:
            await job.queue.defer(JUDGE_TASK, run_id=run_id)
        else:
            manager = job.resources.get(JUDGE_MANAGER)
            launch(manager=manager, session_factory=job.session_factory, run_id=run_id)


def register() -> None:
    """Register the judge-run task, and resuming stale judge runs every minute."""
    register_task(JUDGE_TASK, judge_run)
    MINUTE.add("judge runs", resume_stale)
