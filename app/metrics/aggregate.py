"""Case and per-tag scores of every metric over a run's per-query scores."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "AGGREGATES",
    "MetricDef",
    "MetricSummary",
    "QueryScores",
    "TagSummary",
    "aggregate_mean",
    "summarize",
]

AGGREGATES = ("mean", "weighted_mean")


@dataclass(frozen=True)
class MetricDef:
    """One metric of a case: its scorer's id and name."""

    scorer_id: int
    name: str


@dataclass(frozen=True)
class QueryScores:
    """One query's scores by scorer id (None: not scored), with its tags and weight."""

    scores: Mapping[int, float | None]
    tags: Sequence[str] = ()
    weight: float = 1.0


@dataclass(frozen=True)
class TagSummary:
    tag: str
    count: int
    mean: float | None
    min: float | None


@dataclass(frozen=True)
class MetricSummary:
    scorer_id: int
    name: str
    case_score: float | None
    scored: int
    by_tag: list[TagSummary] = field(default_factory=list)


def aggregate_mean(pairs: Iterable[tuple[float, float]], *, weighted: bool) -> float | None:
    """Return the mean of (score, weight) pairs: Σ wᵢ·sᵢ / Σ wᵢ when weighted; None if empty."""
    total = weights = 0.0
    for score, weight in pairs:
        w = weight if weighted else 1.0
        total += w * score
        weights += w
    return total / weights if weights > 0 else None


def summarize(
    metrics: Sequence[MetricDef], queries: Iterable[QueryScores], *, weighted: bool = False
) -> list[MetricSummary]:
    """Return each metric's case score, scored count and per-tag count, mean and min.

    Only scored queries (a number, not None) count, in the case as in its tags; tags are
    listed alphabetically. One pass over the queries, whatever the number of metrics.
    """
    sums = {m.scorer_id: _Acc() for m in metrics}
    tags: dict[str, dict[int, _Acc]] = {}
    for query in queries:
        for metric in metrics:
            score = query.scores.get(metric.scorer_id)
            if score is None:
                continue
            sums[metric.scorer_id].add(score, query.weight, weighted)
            for tag in query.tags:
                per = tags.setdefault(tag, {})
                per.setdefault(metric.scorer_id, _Acc()).add(score, query.weight, weighted)
    return [
        MetricSummary(
            scorer_id=m.scorer_id,
            name=m.name,
            case_score=sums[m.scorer_id].mean(),
            scored=sums[m.scorer_id].count,
            by_tag=[
                TagSummary(tag=tag, count=acc.count, mean=acc.mean(), min=acc.low)
                for tag in sorted(tags)
                if (acc := tags[tag].get(m.scorer_id)) is not None
            ],
        )
        for m in metrics
    ]


class _Acc:
    """A running weighted sum, count and minimum."""

    __slots__ = ("count", "low", "total", "weights")

    def __init__(self) -> None:
        self.total = 0.0
        self.weights = 0.0
        self.count = 0
        self.low: float | None = None

    def add(self, score: float, weight: float, weighted: bool) -> None:
        w = weight if weighted else 1.0
        self.total += w * score
        self.weights += w
        self.count += 1
        if self.low is None or score < self.low:
            self.low = score

    def mean(self) -> float | None:
        return self.total / self.weights if self.weights > 0 else None
