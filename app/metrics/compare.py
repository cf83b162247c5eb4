"""Every metric of two runs side by side: delta, paired p-values, Holm's correction, tags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from app.metrics.aggregate import MetricDef, QueryScores, aggregate_mean
from app.scoring.significance import FLIPS, SEED, paired_stats, randomization_ps

__all__ = ["MetricComparison", "TagDelta", "compare_metrics", "holm"]


@dataclass(frozen=True)
class TagDelta:
    tag: str
    count: int
    delta: float | None


@dataclass(frozen=True)
class MetricComparison:
    scorer_id: int
    name: str
    n: int
    base: float | None
    other: float | None
    delta: float | None
    p_t: float | None
    p_randomization: float | None
    p_holm: float | None
    by_tag: list[TagDelta]


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Return Holm's step-down adjustment of the given p-values (None stays None).

    The i-th smallest of m p-values becomes max over j <= i of min(1, (m - j + 1) p_(j)),
    as statsmodels' multipletests(method="holm") computes it.
    """
    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if not present:
        return adjusted
    values = np.asarray([p for _, p in present], dtype=np.float64)
    order = np.argsort(values, kind="stable")
    scaled = values[order] * np.arange(values.size, 0, -1)
    corrected = np.minimum(np.maximum.accumulate(scaled), 1.0)
    for rank, position in enumerate(order.tolist()):
        adjusted[present[position][0]] = float(corrected[rank])
    return adjusted


def compare_metrics(
    metrics: Sequence[MetricDef],
    base: Mapping[int, QueryScores],
    other: Mapping[int, QueryScores],
    *,
    weighted: bool = False,
    seed: int | Sequence[int] = SEED,
) -> list[MetricComparison]:
    """Compare every metric over the queries (by id) scored by it in both runs.

    ``base`` and ``other`` map query ids to their scores; tags and weights are the other
    side's (today's, as both are read now). Means and p-values are weighted when asked (the
    paired tests of app.scoring.significance), and p_holm corrects the metrics'
    randomization p-values together. The randomization tests of all the metrics share one
    matrix of sign flips drawn with ``seed`` (derive it from the two runs' ids: the same
    comparison then shows the same p-values every time).
    """
    paired = [_pairs(m.scorer_id, base, other) for m in metrics]
    shared = _shared_ps(paired, list(other), weighted, seed)
    found = [
        _one(m, pairs, weighted, p) for m, pairs, p in zip(metrics, paired, shared, strict=True)
    ]
    corrected = holm([c.p_randomization for c in found])
    return [
        MetricComparison(**{**c.__dict__, "p_holm": p})
        for c, p in zip(found, corrected, strict=True)
    ]


_Pairs = list[tuple[float, float, QueryScores, int]]


def _pairs(sid: int, base: Mapping[int, QueryScores], other: Mapping[int, QueryScores]) -> _Pairs:
    pairs: _Pairs = []
    for query_id, after in other.items():
        before = base.get(query_id)
        b = None if before is None else before.scores.get(sid)
        a = after.scores.get(sid)
        if a is not None and b is not None:
            pairs.append((b, a, after, query_id))
    return pairs


def _shared_ps(
    paired: Sequence[_Pairs],
    query_ids: Sequence[int],
    weighted: bool,
    seed: int | Sequence[int],
) -> list[float | None]:
    """Return each metric's randomization p, every metric flipped by the same flips."""
    if not any(paired):
        return [None] * len(paired)
    row = {qid: i for i, qid in enumerate(query_ids)}
    deltas = np.zeros((len(query_ids), len(paired)))
    for column, pairs in enumerate(paired):
        for b, a, query, qid in pairs:
            deltas[row[qid], column] = (a - b) * (query.weight if weighted else 1.0)
    found = randomization_ps(deltas, flips=FLIPS, seed=seed)
    return [p if pairs else None for p, pairs in zip(found, paired, strict=True)]


def _one(
    metric: MetricDef, pairs: _Pairs, weighted: bool, shared_p: float | None
) -> MetricComparison:
    stats = paired_stats(
        [b for b, _, _, _ in pairs],
        [a for _, a, _, _ in pairs],
        weights=[q.weight for _, _, q, _ in pairs] if weighted else None,
        shared_p=shared_p,
    )
    tags: dict[str, list[tuple[float, float]]] = {}
    for b, a, query, _ in pairs:
        for tag in query.tags:
            tags.setdefault(tag, []).append((a - b, query.weight))
    return MetricComparison(
        scorer_id=metric.scorer_id,
        name=metric.name,
        n=len(pairs),
        base=aggregate_mean(((b, q.weight) for b, _, q, _ in pairs), weighted=weighted),
        other=aggregate_mean(((a, q.weight) for _, a, q, _ in pairs), weighted=weighted),
        delta=aggregate_mean(((a - b, q.weight) for b, a, q, _ in pairs), weighted=weighted),
        p_t=stats.t_test_p,
        p_randomization=stats.randomization_p,
        p_holm=None,
        by_tag=[
            TagDelta(tag=tag, count=len(deltas), delta=aggregate_mean(deltas, weighted=weighted))
            for tag, deltas in sorted(tags.items())
        ],
    )
