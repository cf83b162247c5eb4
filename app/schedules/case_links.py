"""A case's `schedule` and `next_run_at` in the cases API (POST, PATCH, GET, list)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.schemas import ScheduleBody
from app.db import as_utc
from app.errors import Invalid
from app.models import Case, CaseSchedule
from app.schedules import service
from app.schedules.cron import normalise

__all__ = ["apply_schedule", "check_new_schedule", "schedule_fields"]


def check_new_schedule(schedule: ScheduleBody | None, *, new: bool = True) -> None:
    """Refuse (422) a bad schedule before the case is created or changed."""
    if schedule is None:
        return
    try:
        normalise(schedule.cron)
    except Invalid as exc:
        raise Invalid(("schedule", "cron"), exc.message) from None
    if new and schedule.try_number not in (None, 1):
        raise Invalid(("schedule", "try_number"), "A new case has only try 1.")


def apply_schedule(*, session: Session, case: Case, body: Any) -> None:
    """Set, replace or (``"schedule": null``) remove the case's schedule when the body has one."""
    if "schedule" not in body.model_fields_set:
        return
    wanted: ScheduleBody | None = body.schedule
    if wanted is None:
        found = session.get(CaseSchedule, case.id)
        if found is not None:
            session.delete(found)
            session.flush()
        return
    service.set_schedule(session=session, case=case, body=wanted)


def schedule_fields(*, session: Session, case_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Return each scheduled case's {"schedule": {cron, try_number}, "next_run_at"}."""
    if not case_ids:
        return {}
    rows = session.scalars(select(CaseSchedule).where(CaseSchedule.case_id.in_(case_ids)))
    return {
        s.case_id: {
            "schedule": ScheduleBody.model_construct(cron=s.cron, try_number=s.try_number),
            "next_run_at": as_utc(s.next_run_at),
        }
        for s in rows
    }
