"""The schedules' work in the job kernel: alerts as each run ends, schedules every minute."""

from __future__ import annotations

import asyncio

from app.jobs.registry import MINUTE, Job
from app.runs.events import RUN_ENDED, RunEnded
from app.runs.queue import START_RUN
from app.schedules.ticks import fire_and_deliver, run_ended

__all__ = ["alerts_of_ended_run", "fire_schedules", "register"]


async def alerts_of_ended_run(event: RunEnded) -> None:
    """Evaluate the alert rules of the run's case (deliveries go on in the background)."""
    await run_ended(session_factory=event.session_factory, run_id=event.run_id)


async def fire_schedules(job: Job) -> None:
    """Fire the due schedules, start the runs they queued, and deliver the alerts due.

    The schedules' own claim makes each due time start one run even if two minutes overlap.
    """
    start = job.resources.get(START_RUN)
    starting: list[asyncio.Future[object]] = []

    def begin(run_id: int) -> None:  # at once, before the alerts are delivered
        starting.append(asyncio.ensure_future(start(run_id)))

    await fire_and_deliver(session_factory=job.session_factory, start=begin)
    await asyncio.gather(*starting)


def register() -> None:
    """Evaluate alerts as each run ends, and fire schedules every minute."""
    RUN_ENDED.add("alerts", alerts_of_ended_run)
    MINUTE.add("schedules", fire_schedules)
