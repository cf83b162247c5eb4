"""Every metric of a run: the per-query scores stored with its results, summarised.

The summaries are computed when read, from the stored per-query metric scores and the
queries' current tags and weights (a tag added today segments yesterday's run too);
``recorded_metrics`` on the run keeps what each metric scored when the run finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.metrics import MetricDef, MetricSummary, QueryScores, summarize
from app.models import Case, Query, Run, RunQuery, Scorer
from app.scorers.config import config_of
from app.scoring import ScorerConfig
from app.vocabulary import QueryStatus

__all__ = [
    "metric_configs",
    "metric_defs",
    "metric_ids",
    "query_scores",
    "recorded",
    "run_metrics",
    "scores_of_row",
    "weighted",
]


def metric_ids(run: Run) -> list[int]:
    """Return the run's metric scorer ids, the primary first."""
    extra = [int(i) for i in run.metric_scorer_ids or [] if int(i) != run.scorer_id]
    return ([run.scorer_id] if run.scorer_id is not None else []) + extra


def metric_defs(*, session: Session, ids: Sequence[int]) -> list[MetricDef]:
    """Return the metrics of these scorer ids with their names (deleted scorers left out)."""
    if not ids:
        return []
    names = dict(session.execute(select(Scorer.id, Scorer.name).where(Scorer.id.in_(ids))).all())
    return [MetricDef(scorer_id=i, name=names[i]) for i in ids if i in names]


def metric_configs(*, session: Session, run: Run) -> list[tuple[int, ScorerConfig]]:
    """Return the run's extra metric scorers' configs (deleted scorers are left out)."""
    ids = metric_ids(run)[1:]
    if not ids:
        return []
    found = {s.id: s for s in session.scalars(select(Scorer).where(Scorer.id.in_(ids)))}
    return [(i, config_of(found[i])) for i in ids if i in found]


def weighted(case: Case | None) -> bool:
    """Return whether the case averages its queries by weight."""
    return case is not None and case.aggregate == "weighted_mean"


def scores_of_row(
    primary_id: int | None,
    status: QueryStatus,
    score: float | None,
    stored: Mapping[str, Any] | None,
) -> dict[int, float | None]:
    """Return a stored row's scores by scorer id (a row older than metrics: the primary)."""
    scores = {int(k): v for k, v in (stored or {}).items()}
    if primary_id is not None:
        scores[primary_id] = score if status == QueryStatus.SCORED else None
    return scores


def query_scores(*, session: Session, run: Run, tag: str | None = None) -> dict[int, QueryScores]:
    """Return each query's scores in the run with its current tags and weight, by query id
    (a deleted query's row: minus the row's id, weight 1, no tags).

    With ``tag``, only the queries carrying it.
    """
    stmt = (
        select(
            RunQuery.id,
            RunQuery.query_id,
            RunQuery.status,
            RunQuery.score,
            RunQuery.metric_scores,
            Query.tags,
            Query.weight,
        )
        .outerjoin(Query, Query.id == RunQuery.query_id)
        .where(RunQuery.run_id == run.id)
    )
    result: dict[int, QueryScores] = {}
    for row_id, query_id, status, score, stored, tags, weight in session.execute(stmt):
        if tag is not None and tag not in (tags or []):
            continue
        # A deleted query's row still counts in its run, under a key no query has.
        result[query_id if query_id is not None else -row_id] = QueryScores(
            scores=scores_of_row(run.scorer_id, status, score, stored),
            tags=tuple(tags or ()),
            weight=float(weight if weight is not None else 1.0),
        )
    return result


def run_metrics(
    *, session: Session, run: Run, case: Case | None = None, tag: str | None = None
) -> list[MetricSummary]:
    """Return every metric's case score, scored count and per-tag summary for the run."""
    case = case or session.get(Case, run.case_id)
    defs = metric_defs(session=session, ids=metric_ids(run))
    rows = query_scores(session=session, run=run, tag=tag).values()
    summaries = summarize(defs, rows, weighted=weighted(case))
    if tag is None and summaries and summaries[0].scorer_id == run.scorer_id:
        # The primary's case score is the run's stored one (app.cases.totals, the one place
        # it is written), not a second sum of the same rows: PostgreSQL adds the weighted
        # terms in another order, and the badge read 91.38836091666734 while the panel
        # read ...735 (found by tests/runs/test_score_state_machine.py).
        summaries[0] = replace(summaries[0], case_score=run.case_score)
    return summaries


def recorded(summaries: Iterable[MetricSummary]) -> list[dict[str, Any]]:
    """Return what a run keeps of its metrics when it finishes (no per-tag detail)."""
    return [
        {"scorer_id": m.scorer_id, "name": m.name, "case_score": m.case_score, "scored": m.scored}
        for m in summaries
    ]
