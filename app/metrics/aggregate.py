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
    ids = [m.scorer_id for m in metrics]
    case = _Sums(len(ids))
    tags: dict[str, _Sums] = {}
    for query in queries:
        scores = [query.scores.get(i) for i in ids]
        w = query.weight if weighted else 1.0
        case.add(scores, w)
        for tag in query.tags:
            sums = tags.get(tag)
            if sums is None:
                sums = tags[tag] = _Sums(len(ids))
            sums.add(scores, w)
    ordered = sorted(tags)
    return [
        MetricSummary(
            scorer_id=m.scorer_id,
            name=m.name,
            case_score=case.mean(index),
            scored=case.count[index],
            by_tag=[
                TagSummary(
                    tag=tag,
                    count=tags[tag].count[index],
                    mean=tags[tag].mean(index),
                    min=tags[tag].low[index],
                )
                for tag in ordered
                if tags[tag].count[index]
            ],
        )
        for index, m in enumerate(metrics)
    ]


class _Sums:
    """Running weighted sums, counts and minimums of several metrics (lists by metric)."""

    __slots__ = ("count", "low", "total", "weights")

    def __init__(self, size: int) -> None:
        self.total = [0.0] * size
        self.weights = [0.0] * size
        self.count = [0] * size
        self.low: list[float | None] = [None] * size

    def add(self, scores: Sequence[float | None], weight: float) -> None:
        total, weights, count, low = self.total, self.weights, self.count, self.low
        for index, score in enumerate(scores):
            if score is None:
                continue
            total[index] += weight * score
            weights[index] += weight
            count[index] += 1
            current = low[index]
            if current is None or score < current:
                low[index] = score

    def mean(self, index: int) -> float | None:
        return self.total[index] / self.weights[index] if self.weights[index] > 0 else None
