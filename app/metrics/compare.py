"""Every metric of two runs side by side: delta, paired p-values, Holm's correction, tags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.metrics.aggregate import MetricDef, QueryScores, aggregate_mean
from app.scoring.significance import paired_stats

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
    """Return Holm's step-down adjustment of the given p-values (None stays None)."""
    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if not present:
        return adjusted
    # Imported here: statsmodels takes a second to import, which every `relevo` command
    # (a CI gate included) would pay at start-up.
    from statsmodels.stats.multitest import multipletests

    _reject, corrected, _sidak, _bonf = multipletests([p for _, p in present], method="holm")
    for (index, _p), value in zip(present, corrected, strict=True):
        adjusted[index] = float(value)
    return adjusted


def compare_metrics(
    metrics: Sequence[MetricDef],
    base: Mapping[int, QueryScores],
    other: Mapping[int, QueryScores],
    *,
    weighted: bool = False,
) -> list[MetricComparison]:
    """Compare every metric over the queries (by id) scored by it in both runs.

    ``base`` and ``other`` map query ids to their scores; tags and weights are the other
    side's (today's, as both are read now). Means and p-values are weighted when asked (the
    paired tests of app.scoring.significance), and p_holm corrects the metrics'
    randomization p-values together.
    """
    found = [_one(m, base, other, weighted) for m in metrics]
    corrected = holm([c.p_randomization for c in found])
    return [
        MetricComparison(**{**c.__dict__, "p_holm": p})
        for c, p in zip(found, corrected, strict=True)
    ]


def _one(
    metric: MetricDef,
    base: Mapping[int, QueryScores],
    other: Mapping[int, QueryScores],
    weighted: bool,
) -> MetricComparison:
    sid = metric.scorer_id
    pairs: list[tuple[float, float, QueryScores]] = []
    for query_id, after in other.items():
        before = base.get(query_id)
        b = None if before is None else before.scores.get(sid)
        a = after.scores.get(sid)
        if a is not None and b is not None:
            pairs.append((b, a, after))
    stats = paired_stats(
        [b for b, _, _ in pairs],
        [a for _, a, _ in pairs],
        weights=[q.weight for _, _, q in pairs] if weighted else None,
    )
    tags: dict[str, list[tuple[float, float]]] = {}
    for b, a, query in pairs:
        for tag in query.tags:
            tags.setdefault(tag, []).append((a - b, query.weight))
    return MetricComparison(
        scorer_id=sid,
        name=metric.name,
        n=len(pairs),
        base=aggregate_mean(((b, q.weight) for b, _, q in pairs), weighted=weighted),
        other=aggregate_mean(((a, q.weight) for _, a, q in pairs), weighted=weighted),
        delta=aggregate_mean(((a - b, q.weight) for b, a, q in pairs), weighted=weighted),
        p_t=stats.t_test_p,
        p_randomization=stats.randomization_p,
        p_holm=None,
        by_tag=[
            TagDelta(tag=tag, count=len(deltas), delta=aggregate_mean(deltas, weighted=weighted))
            for tag, deltas in sorted(tags.items())
        ],
    )
