"""Statistics and overlap of a comparison: is the other run really better, how different?"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.compare.schemas import (
    CaseOverlap,
    ChangedQuery,
    CompareCounts,
    CompareSide,
    CompareStats,
    QueryComparison,
    QueryOverlap,
)
from app.scoring.overlap import jaccard, rbo_ext
from app.scoring.significance import paired_stats

__all__ = [
    "CHANGED_MOST",
    "case_overlap",
    "compare_stats",
    "in_words",
    "query_overlap",
    "sets_differ",
]

CHANGED_MOST = 10
SIGNIFICANT = 0.05
NO_CHANGE = 1e-9  # as compare.service.SAME: two scores this close are the same score


def query_overlap(base_top: Iterable[str], other_top: Iterable[str]) -> QueryOverlap:
    """Return Jaccard and extrapolated RBO of two top-k id lists (best first)."""
    a, b = list(base_top), list(other_top)
    return QueryOverlap.model_construct(jaccard=jaccard(a, b), rbo=rbo_ext(a, b))


def compare_stats(
    queries: Sequence[QueryComparison], weights: Mapping[int, float] | None = None
) -> CompareStats:
    """Return the paired statistics over the queries scored in both runs (weighted by the
    queries' weights when given)."""
    pairs = [
        (q.base_score, q.other_score, q.query_id)
        for q in queries
        if q.delta is not None and q.base_score is not None and q.other_score is not None
    ]
    result = paired_stats(
        [b for b, _, _ in pairs],
        [o for _, o, _ in pairs],
        weights=None if weights is None else [weights.get(qid, 1.0) for _, _, qid in pairs],
    )
    values = dict(result.__dict__)
    # Changes that cancel out sum to a rounding error: 0, never "-0.0 points".
    if values["mean_delta"] is not None and abs(values["mean_delta"]) < NO_CHANGE:
        values["mean_delta"] = 0.0
    return CompareStats(**values)


def case_overlap(queries: Sequence[QueryComparison]) -> CaseOverlap:
    """Return the mean overlaps and the queries whose top k changed most."""
    both = [(q, q.overlap) for q in queries if q.overlap is not None]
    n = len(both)
    ranked = sorted(both, key=lambda pair: (pair[1].rbo, pair[1].jaccard, pair[0].position))
    return CaseOverlap(
        n=n,
        mean_jaccard=sum(o.jaccard for _, o in both) / n if n else None,
        mean_rbo=sum(o.rbo for _, o in both) / n if n else None,
        changed_most=[
            ChangedQuery(query_id=q.query_id, text=q.text, jaccard=o.jaccard, rbo=o.rbo)
            for q, o in ranked[:CHANGED_MOST]
            if o.rbo < 1.0
        ],
    )


def in_words(stats: CompareStats) -> str:
    """Return the comparison in one sentence, e.g. "+4.2 points, p = 0.03 (randomization)…"."""
    if stats.n == 0 or stats.mean_delta is None:
        return "No query is scored in both runs: there is nothing to compare."
    parts = [f"{stats.mean_delta:+.1f} points"]
    if stats.randomization_p is not None:
        parts.append(f"p {_p(stats.randomization_p)} (randomization)")
    parts.append(f"{stats.wins} better, {stats.losses} worse, {stats.ties} unchanged")
    sentence = ", ".join(parts) + f" over {stats.n} {'query' if stats.n == 1 else 'queries'}."
    if stats.small_sample:
        return sentence + " Too few queries to tell whether the change is real."
    p = stats.randomization_p
    if p is not None and p < SIGNIFICANT:
        return sentence + " The difference is unlikely to be chance."
    return sentence + " The difference could well be chance."


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else "= " + f"{value:.3f}".rstrip("0").rstrip(".")


def sets_differ(
    base: CompareSide, other: CompareSide, counts: CompareCounts, stats: CompareStats
) -> str | None:
    """Return why the case scores' difference is not the headline, or None when both case
    scores average the same queries (then the two numbers agree)."""
    if stats.n == base.scored == other.scored:
        return None
    reasons = []
    if counts.only_base:
        reasons.append(f"{_queries(counts.only_base)} only in base")
    if counts.only_other:
        reasons.append(f"{_queries(counts.only_other)} only in other")
    if counts.incomparable:
        reasons.append(f"{_queries(counts.incomparable)} not scored in both")
    why = "; ".join(reasons) or "different queries scored"
    sentence = (
        f"The case scores average different queries (base {base.scored}, "
        f"other {other.scored}; {why})"
    )
    if base.case_score is not None and other.case_score is not None:
        gap = other.case_score - base.case_score
        sentence += f": their difference, {gap:+.1f}, mixes the change with that"
    if stats.mean_delta is None:
        return sentence + ". No query is scored in both, so there is no change to show."
    return sentence + (
        f". Over the {_queries(stats.n)} scored in both, other is {stats.mean_delta:+.1f}."
    )


def _queries(n: int) -> str:
    return f"{n} {'query' if n == 1 else 'queries'}"
