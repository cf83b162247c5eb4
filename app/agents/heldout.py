"""The held-out half of a case's queries, and a comparison reported on each half.

An agent that tunes on the queries it is judged on overfits. ``propose_try`` therefore
reports a fixed half of the case's queries apart: which half is decided by a hash of the
case id and each query id, so it is the same on every call (for the same queries), and no
agent can choose it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from pydantic import Field

from app.bodies import ResponseBody
from app.compare.schemas import QueryComparison
from app.compare.stats import compare_stats, decide

__all__ = ["HalfMetric", "HalfReport", "half_report", "held_out_ids"]


def _rank(case_id: int, query_id: int) -> str:
    return hashlib.sha256(f"relevo held-out {case_id}:{query_id}".encode()).hexdigest()


def held_out_ids(case_id: int, query_ids: Iterable[int]) -> set[int]:
    """Return the held-out half of these queries (the smaller half when their count is odd),
    chosen by the case: the same every time for the same queries."""
    ranked = sorted(set(query_ids), key=lambda qid: _rank(case_id, qid))
    return set(ranked[: len(ranked) // 2])


class HalfMetric(ResponseBody):
    scorer_id: int
    name: str
    n: int = Field(description="Queries of the half scored by this metric in both runs")
    base: float | None = Field(description="Mean over those queries in the base run")
    other: float | None
    delta: float | None = Field(description="other - base")


class HalfReport(ResponseBody):
    queries: int = Field(description="Queries in this half")
    query_ids: list[int]
    mean_delta: float | None = Field(description="The primary metric's paired mean change")
    wins: int
    losses: int
    ties: int
    randomization_p: float | None
    verdict: str = Field(description="The compare rule's verdict on this half alone")
    summary: str
    metrics: list[HalfMetric] = Field(description="Every metric of the case, the primary first")


def half_report(
    *,
    ids: set[int],
    queries: Sequence[QueryComparison],
    metrics: Sequence[tuple[int, str]],
    scores: tuple[
        Mapping[int, Mapping[str, float | None]], Mapping[int, Mapping[str, float | None]]
    ],
    weights: Mapping[int, float] | None,
) -> HalfReport:
    """Return the comparison over the queries in ``ids``: the primary metric's paired test
    and verdict (from the comparison's re-scored queries) and every metric's paired means
    (``scores``: per run, query id → {str(scorer_id): score})."""
    chosen = [q for q in queries if q.query_id in ids]
    stats = compare_stats(chosen, weights)
    decision = decide(stats)
    primary_id = metrics[0][0] if metrics else None
    base_scores, other_scores = scores
    rows: list[HalfMetric] = []
    for scorer_id, name in metrics:
        if scorer_id == primary_id:
            pairs = [
                (q.base_score, q.other_score, q.query_id)
                for q in chosen
                if q.base_score is not None and q.other_score is not None
            ]
        else:
            key = str(scorer_id)
            pairs = []
            for qid in sorted(ids):
                before = base_scores.get(qid, {}).get(key)
                after = other_scores.get(qid, {}).get(key)
                if before is not None and after is not None:
                    pairs.append((before, after, qid))
        rows.append(_metric(scorer_id, name, pairs, weights))
    return HalfReport(
        queries=len(ids),
        query_ids=sorted(ids),
        mean_delta=stats.mean_delta,
        wins=stats.wins,
        losses=stats.losses,
        ties=stats.ties,
        randomization_p=stats.randomization_p,
        verdict=decision.verdict,
        summary=decision.sentence,
        metrics=rows,
    )


def _metric(
    scorer_id: int,
    name: str,
    pairs: Sequence[tuple[float, float, int]],
    weights: Mapping[int, float] | None,
) -> HalfMetric:
    if not pairs:
        return HalfMetric(scorer_id=scorer_id, name=name, n=0, base=None, other=None, delta=None)
    w = [1.0 if weights is None else float(weights.get(qid, 1.0)) for _, _, qid in pairs]
    total = sum(w) or 1.0
    base = sum(wi * b for wi, (b, _, _) in zip(w, pairs, strict=True)) / total
    other = sum(wi * o for wi, (_, o, _) in zip(w, pairs, strict=True)) / total
    return HalfMetric(
        scorer_id=scorer_id, name=name, n=len(pairs), base=base, other=other, delta=other - base
    )
