"""Creating and changing a case with what reaches past it: sharing, schedule, re-scoring.

A case's own checks and rows are app.cases.service; these flows add the other domains a
request names (teams to share with, a schedule) and re-score the latest run when the scorer
or metrics change, so each route makes one call.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.cases.schemas import CaseCreate, CaseUpdate
from app.models import Case, Run, User
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.schedules.case_links import apply_schedule, check_new_schedule
from app.teams import service as teams

__all__ = ["create_case", "rescore_latest", "update_case"]


def create_case(*, session: Session, user: User, body: CaseCreate) -> Case:
    """Create the case with its first try, shared with ``team_ids``, and its schedule."""
    check_new_schedule(body.schedule)
    case = case_service.create_case(session=session, user=user, body=body)
    apply_schedule(session=session, case=case, body=body)
    return case


def update_case(*, session: Session, user: User, case: Case, body: CaseUpdate) -> Case:
    """Apply the changes (sharing, settings, schedule); a new scorer or new metrics re-score
    the latest finished run at once, in the same transaction as the change."""
    teams.set_sharing(session=session, user=user, obj=case, team_ids=body.team_ids)
    check_new_schedule(body.schedule, new=False)
    case = case_service.apply_settings(session=session, user=user, case=case, body=body)
    # In the settings' transaction: the metric set, scorer or aggregate and the latest run's
    # scores by them are written together, or not at all.
    rescore_latest(session=session, case=case)
    apply_schedule(session=session, case=case, body=body)
    session.flush()
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
