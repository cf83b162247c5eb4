"""Schedules: a case's cron schedule, and firing each due time exactly once.

Every process that may fire schedules (the SQLite server's loop, PostgreSQL workers' periodic
task) calls ``fire_due``; a due time is claimed by moving the schedule's ``next_run_at`` on
with a conditional UPDATE, and recorded in ``schedule_firings`` whose (case, due time) is
unique, so however many processes look at the same moment, one run starts. A schedule whose
due times were all missed (everything was down) fires once and moves on from now.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.cases.schemas import ScheduleBody
from app.cases.tries import get_try
from app.db import as_utc
from app.errors import NotFound
from app.models import Case, CaseSchedule, ScheduleFiring
from app.runs import service as run_service
from app.schedules.cron import next_after, normalise
from app.schedules.schemas import ScheduleRead

__all__ = [
    "Fired",
    "delete_schedule",
    "fire_due",
    "get_schedule",
    "next_runs",
    "require_schedule",
    "set_schedule",
    "to_read",
]

log = logging.getLogger(__name__)
SCHEDULE_TRIGGER = "schedule"


def get_schedule(*, session: Session, case: Case) -> CaseSchedule | None:
    """Return the case's schedule, or None."""
    return session.get(CaseSchedule, case.id)


def require_schedule(*, session: Session, case: Case) -> CaseSchedule:
    """Return the case's schedule, or 404."""
    found = session.get(CaseSchedule, case.id)
    if found is None:
        raise NotFound(f"Case {case.id} has no schedule.")
    return found


def set_schedule(
    *, session: Session, case: Case, body: ScheduleBody, now: datetime | None = None
) -> CaseSchedule:
    """Create or replace the case's schedule; its next run is the first due time after now."""
    cron = normalise(body.cron)
    if body.try_number is not None:
        get_try(session=session, case=case, number=body.try_number)
    moment = now or datetime.now(UTC)
    schedule = session.get(CaseSchedule, case.id)
    if schedule is None:
        schedule = CaseSchedule(case_id=case.id, cron=cron, next_run_at=moment)
        session.add(schedule)
    schedule.cron = cron
    schedule.try_number = body.try_number
    schedule.next_run_at = next_after(cron, moment)
    session.flush()
    return schedule


def delete_schedule(*, session: Session, case: Case) -> None:
    """Stop running the case on a schedule (404 when it has none)."""
    schedule = session.get(CaseSchedule, case.id)
    if schedule is None:
        raise NotFound(f"Case {case.id} has no schedule.")
    session.delete(schedule)
    session.flush()


def to_read(schedule: CaseSchedule) -> ScheduleRead:
    """Return the API view of a schedule."""
    return ScheduleRead(
        case_id=schedule.case_id,
        cron=schedule.cron,
        try_number=schedule.try_number,
        next_run_at=as_utc(schedule.next_run_at),
        last_fired_at=None if schedule.last_fired_at is None else as_utc(schedule.last_fired_at),
    )


def next_runs(*, session: Session, case_ids: list[int]) -> dict[int, datetime]:
    """Return the next scheduled run time of each of these cases that has a schedule."""
    if not case_ids:
        return {}
    rows = session.execute(
        select(CaseSchedule.case_id, CaseSchedule.next_run_at).where(
            CaseSchedule.case_id.in_(case_ids)
        )
    ).all()
    return {case_id: as_utc(at) for case_id, at in rows}


@dataclass(frozen=True)
class Fired:
    """One due time that this process claimed, and the run it queued (None if it could not)."""

    case_id: int
    due_at: datetime
    run_id: int | None


def fire_due(*, session: Session, now: datetime | None = None) -> list[Fired]:
    """Queue one run for every schedule due at ``now``; return the due times this call claimed."""
    moment = as_utc(now or datetime.now(UTC))
    due = session.execute(
        select(CaseSchedule.case_id, CaseSchedule.cron, CaseSchedule.next_run_at).where(
            CaseSchedule.next_run_at <= moment
        )
    ).all()
    session.rollback()
    fired = []
    for case_id, cron, due_at in due:
        one = _fire_one(session, case_id=case_id, cron=cron, due_at=due_at, now=moment)
        if one is not None:
            fired.append(one)
    return fired


def _fire_one(
    session: Session, *, case_id: int, cron: str, due_at: datetime, now: datetime
) -> Fired | None:
    claimed = session.execute(
        update(CaseSchedule)
        .where(CaseSchedule.case_id == case_id, CaseSchedule.next_run_at == due_at)
        .values(next_run_at=next_after(cron, now), last_fired_at=now)
        .execution_options(synchronize_session=False)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        session.rollback()  # another process claimed this due time first
        return None
    firing = ScheduleFiring(case_id=case_id, due_at=due_at, fired_at=now)
    session.add(firing)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        return None
    firing.run_id = _queue_run(session, case_id)
    session.commit()
    return Fired(case_id=case_id, due_at=as_utc(due_at), run_id=firing.run_id)


def _queue_run(session: Session, case_id: int) -> int | None:
    schedule = session.get(CaseSchedule, case_id)
    case = session.get(Case, case_id)
    if schedule is None or case is None:
        return None
    try:
        with session.begin_nested():
            run = run_service.create_run(session=session, case=case, try_number=schedule.try_number)
            run.trigger = SCHEDULE_TRIGGER
    except Exception:  # a pinned try deleted, a case half gone: this due time is skipped
        log.exception("the schedule of case %s could not queue its run", case_id)
        return None
    return run.id
