"""The case score panel: a case's latest finished run's score, counts and scorers."""

from __future__ import annotations

from pydantic import Field
from sqlalchemy.orm import Session

from app.bodies import ResponseBody
from app.models import Case, Run
from app.runs import service as run_service

__all__ = ["CaseScore", "case_score", "score_of"]


class CaseScore(ResponseBody):
    case_id: int
    run_id: int | None = Field(description="The latest finished run the score comes from")
    case_score: float | None
    scorer_id: int | None = Field(default=None, description="The scorer that gave these scores")
    scorer_name: str | None = Field(default=None, description="That scorer's name")
    scored: int
    unscored: int
    errors: int
    total: int = Field(
        default=0, description="Queries in the run; scored < total makes the score partial"
    )
    recorded_score: float | None = Field(
        default=None, description="The run's case score when it finished (never changes)"
    )
    recorded_scorer_id: int | None = Field(default=None, description="The scorer it finished with")
    recorded_scorer_name: str | None = Field(default=None, description="That scorer's name")
    recorded_aggregate: str | None = Field(
        default=None,
        description='The mean it finished with, "mean" or "weighted_mean" (null: not recorded)',
    )


def score_of(*, case_id: int, run: Run | None) -> CaseScore:
    """Return the case score panel's numbers from a finished run (or none yet)."""
    if run is None:
        return CaseScore(
            case_id=case_id, run_id=None, case_score=None, scored=0, unscored=0, errors=0
        )
    return CaseScore(
        case_id=case_id,
        run_id=run.id,
        case_score=run.case_score,
        scorer_id=run.scorer_id,
        scorer_name=run.scorer.name if run.scorer is not None else None,
        scored=run.scored,
        unscored=run.unscored,
        errors=run.errors,
        total=run.total,
        recorded_score=run.recorded_score,
        recorded_scorer_id=run.recorded_scorer_id,
        recorded_scorer_name=_recorded_scorer_name(run),
        recorded_aggregate=run.recorded_aggregate,
    )


def _recorded_scorer_name(run: Run) -> str | None:
    if run.recorded_scorer_id is None:
        return None
    if run.recorded_scorer_id == run.scorer_id and run.scorer is not None:
        return run.scorer.name
    return run.recorded_scorer.name if run.recorded_scorer is not None else None


def case_score(*, session: Session, case: Case) -> CaseScore:
    """Return the case score of the latest finished run with its unscored and error counts."""
    return score_of(
        case_id=case.id, run=run_service.latest_finished_run(session=session, case=case)
    )
