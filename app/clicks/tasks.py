"""The click logs' jobs: a pull from an engine's UBI indexes, on a worker.

A pull holds its worker slot until both indexes are read; its database work blocks, so it
runs in a thread of the worker's (``pull.run_in_thread``).
"""

from __future__ import annotations

from app.clicks import pull
from app.jobs.registry import Job, register_task

__all__ = ["click_pull", "register"]


async def click_pull(job: Job, *, click_log_id: int, pull_id: str) -> None:
    """Do a queued pull of a click log to its end."""
    await pull.run_in_thread(job.session_factory, click_log_id=click_log_id, pull_id=pull_id)


def register() -> None:
    """Register the pull task."""
    register_task(pull.PULL_TASK, click_pull)
