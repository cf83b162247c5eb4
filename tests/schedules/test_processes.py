"""Exactly one run per due time across separate processes, and the queue's periodic task."""

from __future__ import annotations

import multiprocessing
from datetime import datetime
from multiprocessing.synchronize import Barrier

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.schemas import ScheduleBody
from app.db import as_utc, session_scope
from app.jobs.queue import MINUTE_TASK, build_job_app
from app.jobs.registry import MINUTE
from app.models import Case, Run
from app.registration import register_jobs
from app.schedules import service
from tests.fixtures.users import ApiUser
from tests.schedules.helpers import new_case


def _server(url: str, due: datetime, barrier: Barrier, claimed: multiprocessing.Queue[int]) -> None:
    from app.db import make_engine, make_session_factory

    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session:
            barrier.wait(timeout=60)
            fired = service.fire_due(session=session, now=due)
            claimed.put(len(fired))
    finally:
        engine.dispose()


@pytest.mark.runner
def test_two_processes_firing_the_same_due_time_start_one_run(
    api: ApiUser, session_factory: sessionmaker[Session], db_url: str
) -> None:
    case_id, _ = new_case(api, queries=1)
    with session_scope(session_factory) as db:
        case = db.get(Case, case_id)
        assert case is not None
        schedule = service.set_schedule(session=db, case=case, body=ScheduleBody(cron="@hourly"))
        due = as_utc(schedule.next_run_at)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    claimed: multiprocessing.Queue[int] = context.Queue()
    workers = [
        context.Process(target=_server, args=(db_url, due, barrier, claimed)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0]
    assert sorted(claimed.get(timeout=5) for _ in workers) == [0, 1]
    with session_scope(session_factory) as db:
        runs = list(db.scalars(select(Run.trigger).where(Run.case_id == case_id)))
        assert runs == ["schedule"]


def test_workers_fire_schedules_every_minute_through_the_queue() -> None:
    register_jobs()
    job_app = build_job_app("postgresql://nobody@127.0.0.1:1/none")  # not opened
    task = job_app.periodic_registry.periodic_tasks[(MINUTE_TASK, "minute")]
    assert (task.task.name, task.cron) == (MINUTE_TASK, "* * * * *")
    # The minute's work: schedules fire first, then judge runs left by a stopped process.
    assert MINUTE.names()[:2] == ["schedules", "judge runs"]
    assert {"relevo.run_chunk", "relevo.judge_run"} <= set(job_app.tasks)
