"""Every domain's jobs and hooks, registered with the job kernel (``app.jobs``) at start-up.

The web app (app/main.py) and the worker command (app/cli/worker.py) call ``register_jobs``
before they open the queue; registering again changes nothing.
"""

from __future__ import annotations

from app.clicks import tasks as click_tasks
from app.judges import tasks as judge_tasks
from app.runs import tasks as run_tasks
from app.schedules import tasks as schedule_tasks
from app.sweeps import tasks as sweep_tasks

__all__ = ["register_jobs"]


def register_jobs() -> None:
    """Register the domains' tasks, their minute's work and their hooks' work."""
    run_tasks.register()
    schedule_tasks.register()  # every minute: schedules first, then judge runs resumed
    judge_tasks.register()
    sweep_tasks.register()
    click_tasks.register()
