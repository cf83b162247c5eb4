"""Case changes that reach past the case itself: a new scorer re-scores the latest run.

Kept apart from app.cases.service because re-scoring needs app.runs.service, which
already depends on the cases service.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.cases.schemas import CaseUpdate
from app.models import Case, Run, User
from app.runs import rescore as rescoring
from app.runs import service as run_service

__all__ = ["rescore_latest", "update_case"]


def update_case(*, session: Session, user: User, case: Case, body: CaseUpdate) -> Case:
    """Apply the case changes; a switch of scorer re-scores the latest finished run at once."""
    case = case_service.update_case(session=session, user=user, case=case, body=body)
    rescore_latest(session=session, case=case)
    return case


def rescore_latest(*, session: Session, case: Case) -> Run | None:
    """Re-score the latest finished run's stored rankings with the case's scorer and metrics
    (no engine call).

    Returns the run (or None when there is none); a run already scored by the case's
    scorer and metrics is left as it is.
    """
    run = run_service.latest_finished_run(session=session, case=case)
    metrics = list(case.metric_scorer_ids or [])
    if run is None or (
        run.scorer_id == case.scorer_id and (run.metric_scorer_ids or []) == metrics
    ):
        return run
    run.scorer_id = case.scorer_id
    run.metric_scorer_ids = metrics
    return rescoring.rescore_run(session=session, run=run)
