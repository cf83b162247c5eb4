"""Runs: a run's totals (per-status counts and the case score) recounted from its rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.models import Case, Query, Run, RunQuery
from app.vocabulary import QueryStatus


def refresh_totals(*, session: Session, run_id: int) -> None:
    # One statement: per status, the count and the mean score (the scored group's is the case's).
    groups = session.execute(
        select(RunQuery.status, func.count(), func.avg(RunQuery.score))
        .where(RunQuery.run_id == run_id)
        .group_by(RunQuery.status)
    ).all()
    counts = {status: count for status, count, _mean in groups}
    mean = next((m for status, _count, m in groups if status == QueryStatus.SCORED), None)
    if _weighted_run(session, run_id):
        mean = session.scalar(weighted_score(run_id))
    session.execute(
        update(Run)
        .where(Run.id == run_id)
        .values(
            case_score=None if mean is None else float(mean),
            scored=counts.get(QueryStatus.SCORED, 0),
            unscored=counts.get(QueryStatus.UNSCORED, 0),
            errors=counts.get(QueryStatus.ERROR, 0),
        )
    )


def _weighted_run(session: Session, run_id: int) -> bool:
    aggregate = session.scalar(
        select(Case.aggregate).join(Run, Run.case_id == Case.id).where(Run.id == run_id)
    )
    return aggregate == "weighted_mean"


def weighted_score(run_id: int) -> Any:
    """Return a SELECT of the run's weighted case score, Σ wᵢ·sᵢ / Σ wᵢ over scored queries
    (a deleted query weighs 1)."""
    weight = func.coalesce(Query.weight, 1.0)
    return (
        select(func.sum(RunQuery.score * weight) / func.nullif(func.sum(weight), 0))
        .select_from(RunQuery)
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id == run_id, RunQuery.status == QueryStatus.SCORED)
    )


def refresh_totals_of(*, session: Session, run: Run, weighted: bool) -> None:
    """Recount the run's totals in one UPDATE and set them on the loaded run (no reload).

    ``weighted``: the case's aggregate is the weighted mean (the caller has the case loaded).
    """

    def of(status: QueryStatus, value: Any) -> Any:
        return (
            select(value)
            .where(RunQuery.run_id == run.id, RunQuery.status == status)
            .scalar_subquery()
        )

    stmt = (
        update(Run)
        .where(Run.id == run.id)
        .values(
            case_score=(
                weighted_score(run.id).scalar_subquery()
                if weighted
                else of(QueryStatus.SCORED, func.avg(RunQuery.score))
            ),
            scored=of(QueryStatus.SCORED, func.count()),
            unscored=of(QueryStatus.UNSCORED, func.count()),
            errors=of(QueryStatus.ERROR, func.count()),
        )
        .returning(Run.case_score, Run.scored, Run.unscored, Run.errors)
        .execution_options(synchronize_session=False)
    )
    case_score, scored, unscored, errors = session.execute(stmt).one()
    for name, value in (
        ("case_score", None if case_score is None else float(case_score)),
        ("scored", scored),
        ("unscored", unscored),
        ("errors", errors),
    ):
        set_committed_value(run, name, value)
