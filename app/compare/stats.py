"""Statistics and overlap of a comparison: is the other run really better, how different?"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.compare.schemas import (
    CaseOverlap,
    ChangedQuery,
    CompareCounts,
    CompareSide,
    CompareStats,
    QueryComparison,
    QueryOverlap,
    Verdict,
)
from app.scoring.overlap import jaccard, rbo_ext
from app.scoring.significance import SEED, paired_stats

__all__ = [
    "CHANGED_MOST",
    "Decision",
    "Verdict",
    "case_overlap",
    "compare_stats",
    "decide",
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
    queries: Sequence[QueryComparison],
    weights: Mapping[int, float] | None = None,
    *,
    seed: int | Sequence[int] = SEED,
    shared_p: float | None = None,
) -> CompareStats:
    """Return the paired statistics over the queries scored in both runs (weighted by the
    queries' weights when given).

    ``seed`` seeds the randomization test's sign flips; ``shared_p`` is its p already
    computed with the other metrics' flips (app.metrics.compare), used as is.
    """
    pairs = [
        (q.base_score, q.other_score, q.query_id)
        for q in queries
        if q.delta is not None and q.base_score is not None and q.other_score is not None
    ]
    result = paired_stats(
        [b for b, _, _ in pairs],
        [o for _, o, _ in pairs],
        weights=None if weights is None else [weights.get(qid, 1.0) for _, _, qid in pairs],
        seed=seed,
        shared_p=shared_p,
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


@dataclass(frozen=True)
class Decision:
    """The comparison's one verdict and the p-value it rests on."""

    verdict: Verdict
    p: float | None  # the randomization p, Holm-corrected when several metrics are compared
    sentence: str


def decide(stats: CompareStats, *, p_holm: float | None = None, metrics: int = 1) -> Decision:
    """Return the verdict by the page's one rule and the sentence that says it.

    The rule: the primary metric's randomization p, Holm-corrected over the metrics when the
    case has several, must be below 0.05 *and* the 95% t interval of the mean change must
    exclude 0; then the change is "better" or "worse". When one test says so and the other
    does not, the verdict is "tests_disagree" and the sentence names both; below 10 paired
    queries it is "too_few"; otherwise "no_evidence". No sentence on the page can then
    contradict the numbers beside it.
    """
    if stats.n == 0 or stats.mean_delta is None:
        return Decision(
            "nothing_to_compare",
            None,
            "No query is scored in both runs: there is nothing to compare.",
        )
    raw = stats.randomization_p
    corrected = metrics > 1 and p_holm is not None
    p = p_holm if corrected else raw
    parts = [f"{stats.mean_delta:+.1f} points"]
    if raw is not None:
        parts.append(f"p {_p(raw)} (randomization)")
    if corrected and p is not None:
        parts.append(f"p {_p(p)} with Holm's correction over {metrics} metrics")
    parts.append(f"{stats.wins} better, {stats.losses} worse, {stats.ties} unchanged")
    sentence = ", ".join(parts) + f" over {_queries(stats.n)}."
    if stats.small_sample:
        return Decision(
            "too_few", p, sentence + " Too few queries to tell whether the change is real."
        )
    p_says = p is not None and p < SIGNIFICANT
    interval = _interval(stats)
    interval_says = interval is not None and (stats.ci_low or 0.0) * (stats.ci_high or 0.0) > 0
    if p_says and interval_says:
        direction: Verdict = "better" if stats.mean_delta > 0 else "worse"
        return Decision(
            direction,
            p,
            sentence + f" The difference is unlikely to be chance (p below {SIGNIFICANT:g}, "
            f"and the 95% interval, {interval}, excludes 0).",
        )
    if p_says or interval_says:
        which = "p (Holm)" if corrected else "p"
        if p_says:
            why = f"{which} is below {SIGNIFICANT:g} but the 95% interval, {interval}, includes 0"
        else:
            why = f"the 95% interval, {interval}, excludes 0 but {which} {_p(p or 1.0)}"
        return Decision(
            "tests_disagree",
            p,
            sentence + f" The tests disagree ({why}): the change is not established.",
        )
    return Decision("no_evidence", p, sentence + " The difference could well be chance.")


def _interval(stats: CompareStats) -> str | None:
    if stats.ci_low is None or stats.ci_high is None:
        return None
    return f"{stats.ci_low:+.2f} to {stats.ci_high:+.2f}"


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
