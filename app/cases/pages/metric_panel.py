"""The case page's metrics: each metric's score, change and sparkline; the tags-by-metrics
table; the query ids of a tag (the list's filter).

One read of the latest run's per-query scores with the queries' tags and weights, and one
of the recent runs' recorded metrics, whatever the number of metrics and tags. A tile's
change is ``app.runs.change``'s: the latest and the previous case run both re-scored with
today's ratings, weights and aggregate (the dashboard and the alerts read the same number).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.bodies import ResponseBody
from app.cases.case_runs import case_run
from app.models import Case, Query, Run
from app.runs.change import change_since
from app.runs.metrics import run_metrics
from app.vocabulary import RunStatus

__all__ = ["MetricPanel", "metric_panel", "tag_query_ids"]

SPARK_RUNS = 20


class SparkPoint(ResponseBody):
    run_id: int
    score: float | None


class MetricTile(ResponseBody):
    scorer_id: int
    name: str
    primary: bool
    case_score: float | None
    scored: int
    previous: float | None = Field(
        description="The metric's score in the previous case run (never a sweep's or a "
        "draft's), re-scored with today's ratings, weights and aggregate"
    )
    previous_run_id: int | None = Field(default=None, description="That run's id")
    change: float | None = Field(
        description="The latest run's score minus previous, both re-scored the same way"
    )
    history: list[SparkPoint] = Field(
        description="Scores of the last case runs, oldest first, as recorded when each "
        "finished; the last point is the latest run's current score"
    )


class TagCell(ResponseBody):
    scorer_id: int
    count: int
    mean: float | None
    min: float | None


class TagRow(ResponseBody):
    tag: str
    count: int = Field(description="Queries with the tag scored by the primary metric")
    cells: list[TagCell]


class MetricPanel(ResponseBody):
    run_id: int
    aggregate: str = Field(description='"mean" or "weighted_mean": how queries make a score')
    metrics: list[MetricTile]
    tags: list[TagRow]


def metric_panel(*, session: Session, case: Case, latest: Run | None) -> MetricPanel | None:
    """Return the metric panel of the case's latest finished run (None before any run)."""
    if latest is None:
        return None
    summaries = run_metrics(session=session, run=latest, case=case)
    past = _recorded(session, case, latest)
    since = change_since(
        session=session, case=case, run=latest, scorer_ids=[m.scorer_id for m in summaries]
    )
    tiles = []
    for index, m in enumerate(summaries):
        history = [
            SparkPoint(run_id=run_id, score=scores.get(m.scorer_id)) for run_id, scores in past
        ]
        history.append(SparkPoint(run_id=latest.id, score=m.case_score))
        tiles.append(
            MetricTile(
                scorer_id=m.scorer_id,
                name=m.name,
                primary=index == 0,
                case_score=m.case_score,
                scored=m.scored,
                previous=since.other_score(m.scorer_id),
                previous_run_id=since.other_id,
                change=since.delta(m.scorer_id),
                history=history,
            )
        )
    return MetricPanel(
        run_id=latest.id,
        aggregate=case.aggregate or "mean",
        metrics=tiles,
        tags=_tag_rows(summaries),
    )


def _tag_rows(summaries: Sequence[Any]) -> list[TagRow]:
    cells: dict[str, dict[int, TagCell]] = {}
    for m in summaries:
        for t in m.by_tag:
            cells.setdefault(t.tag, {})[m.scorer_id] = TagCell(
                scorer_id=m.scorer_id, count=t.count, mean=t.mean, min=t.min
            )
    rows = []
    for tag in sorted(cells):
        row = [cells[tag].get(m.scorer_id) or _empty(m.scorer_id) for m in summaries]
        rows.append(TagRow(tag=tag, count=row[0].count if row else 0, cells=row))
    return rows


def _empty(scorer_id: int) -> TagCell:
    return TagCell(scorer_id=scorer_id, count=0, mean=None, min=None)


def _recorded(
    session: Session, case: Case, latest: Run
) -> list[tuple[int, dict[int, float | None]]]:
    """Return the recorded metric scores of the finished case runs before the latest (no
    sweep's combination nor draft), oldest first."""
    stmt = (
        select(Run.id, Run.recorded_score, Run.recorded_scorer_id, Run.recorded_metrics)
        .where(
            Run.case_id == case.id,
            Run.status == RunStatus.FINISHED,
            case_run(),
            Run.id < latest.id,
        )
        .order_by(Run.id.desc())
        .limit(SPARK_RUNS - 1)
    )
    result = []
    for run_id, score, scorer_id, metrics in session.execute(stmt):
        scores = _scores(metrics or [])
        if scorer_id is not None:
            scores.setdefault(scorer_id, score)
        result.append((run_id, scores))
    return result[::-1]


def _scores(recorded: Sequence[Mapping[str, Any]]) -> dict[int, float | None]:
    return {int(m["scorer_id"]): m.get("case_score") for m in recorded if "scorer_id" in m}


def tag_query_ids(*, session: Session, case: Case, tag: str) -> list[int]:
    """Return the ids of the case's queries carrying the tag."""
    stmt = select(Query.id, Query.tags).where(Query.case_id == case.id)
    return [qid for qid, tags in session.execute(stmt) if tag in (tags or [])]
