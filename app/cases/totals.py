"""A run's stored totals (per-status counts and the case score), recounted from its rows.

The one place a run's ``case_score`` is written. It is a function of the run's stored
per-query scores and the case's current aggregate and weights, the same function the metric
panel (``run_metrics``) computes when read, so every change of a row's score, a query's
weight, the aggregate or the set of queries recounts it here: the badge, the metric panel and
the API then agree. ``recorded_score`` keeps what the run scored when it finished.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.models import Case, Query, Run, RunQuery
from app.vocabulary import QueryStatus, RunStatus

__all__ = ["refresh_case_totals", "refresh_totals", "weighted_score"]

_TOTALS = ("case_score", "scored", "unscored", "errors")


def weighted_score(run_id: Any) -> Any:
    """Return a SELECT of the run's weighted case score, Σ wᵢ·sᵢ / Σ wᵢ over scored queries
    (a deleted query weighs 1); ``run_id`` may be a column, correlating it."""
    weight = func.coalesce(Query.weight, 1.0)
    return (
        select(func.sum(RunQuery.score * weight) / func.nullif(func.sum(weight), 0))
        .select_from(RunQuery)
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id == run_id, RunQuery.status == QueryStatus.SCORED)
    )


def _values(weighted: bool) -> dict[str, Any]:
    # Correlated on the updated run's id, so one statement recounts one run or many.
    def of(status: QueryStatus, value: Any) -> Any:
        return (
            select(value)
            .where(RunQuery.run_id == Run.id, RunQuery.status == status)
            .scalar_subquery()
        )

    return {
        "case_score": (
            weighted_score(Run.id).scalar_subquery()
            if weighted
            else of(QueryStatus.SCORED, func.avg(RunQuery.score))
        ),
        "scored": of(QueryStatus.SCORED, func.count()),
        "unscored": of(QueryStatus.UNSCORED, func.count()),
        "errors": of(QueryStatus.ERROR, func.count()),
    }


def _weighted_case(session: Session, where: Any) -> bool:
    aggregate = session.scalar(select(Case.aggregate).where(where))
    return aggregate == "weighted_mean"


def refresh_totals(
    *, session: Session, run_id: int, weighted: bool | None = None, run: Run | None = None
) -> None:
    """Recount one run's totals in one UPDATE, and set them on ``run`` when given (no reload).

    ``weighted``: the case's aggregate is the weighted mean (looked up when not given).
    """
    if weighted is None:
        weighted = _weighted_case(
            session, Case.id == select(Run.case_id).where(Run.id == run_id).scalar_subquery()
        )
    stmt = (
        update(Run)
        .where(Run.id == run_id)
        .values(**_values(weighted))
        .returning(*(getattr(Run, name) for name in _TOTALS))
        .execution_options(synchronize_session=False)
    )
    found = session.execute(stmt).first()
    if run is None or found is None:
        return
    for name, value in zip(_TOTALS, found, strict=True):
        is_score = name == "case_score" and value is not None
        set_committed_value(run, name, float(value) if is_score else value)


def refresh_case_totals(*, session: Session, case_id: int) -> None:
    """Recount the totals of every ended run of the case, after a change of the aggregate,
    a query's weight or the case's queries (the rows' scores stay; their mean changes).

    Loaded runs of the session are expired, so the next read sees the new totals.
    """
    weighted = _weighted_case(session, Case.id == case_id)
    session.flush()
    session.execute(
        update(Run)
        .where(Run.case_id == case_id, Run.status.in_((RunStatus.FINISHED, RunStatus.FAILED)))
        .values(**_values(weighted))
        .execution_options(synchronize_session=False)
    )
    for obj in list(session.identity_map.values()):
        if isinstance(obj, Run) and obj.case_id == case_id:
            session.expire(obj, list(_TOTALS))
