"""Which of a case's runs speak for it: those with results, of the case's own settings (not a
sweep's combination nor an agent's draft)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, or_

from app.models import Run
from app.vocabulary import RunStatus

__all__ = ["case_run", "has_results", "is_of_case", "of_case"]


def has_results() -> Any:
    """Return the condition of a run that stored every query's outcome: finished, or failed
    because every query errored (its errors are its results; a run that failed as a whole,
    before any query, has none).

    The case's latest such run is the one its pages show, so a run where every query
    errored shows no score and its errors rather than the run before it.
    """
    return or_(
        Run.status == RunStatus.FINISHED, and_(Run.status == RunStatus.FAILED, Run.errors > 0)
    )


def of_case() -> Any:
    """Return the condition of a run that is the case's own: not a combination of a knob
    sweep (whatever its status; ``is_of_case`` is the same test on a loaded run).

    A sweep's combinations search with knobs the case does not have (until one is applied,
    which adds a run of its own): they stay in the history, but the case's latest run (its
    badge, the cases list, the dashboard, the run a rating re-scores) and its alerts (their
    evaluation, the run they compare with) never come from them. Nor from a draft (an agent's
    proposed try, ``Run.query_template``), which searched with a template the case does not
    have.
    """
    return and_(Run.sweep_id.is_(None), Run.query_template.is_(None))


def is_of_case(run: Run) -> bool:
    """Return whether a loaded run is the case's own (``of_case``)."""
    return run.sweep_id is None and run.query_template is None


def case_run() -> Any:
    """Return the condition of a run that speaks for the case as it is set: one with results
    (``has_results``) of the case's own (``of_case``)."""
    return and_(has_results(), of_case())
