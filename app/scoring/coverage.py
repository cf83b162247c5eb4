"""Judgement coverage: how much of a score rests on unrated docs, and which rating matters most.

Pure functions of scoring inputs. A query's band is its score with every unrated doc of its
top k set to the scale's lowest grade, then to its highest, re-scored by the same scorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.scoring.score import score_queries
from app.scoring.types import Outcome, QueryInput, ScorerConfig
from app.vocabulary import QueryStatus

__all__ = ["Band", "Impact", "bands", "rating_impacts", "unrated_top"]


@dataclass(frozen=True)
class Band:
    unrated: list[str]
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Impact:
    query_index: int
    doc_id: str
    rank: int
    points: float


def unrated_top(query: QueryInput, k: int) -> list[str]:
    """Return the ids of the unrated docs in the query's top k, best rank first."""
    return [d.id for d in query.docs[:k] if d.id not in query.ratings]


def _graded(query: QueryInput, doc_ids: Sequence[str], grade: float) -> QueryInput:
    return query._replace(ratings={**query.ratings, **dict.fromkeys(doc_ids, grade)})


def _score(outcome: Outcome) -> float | None:
    return outcome.score if outcome.status == QueryStatus.SCORED else None


def bands(config: ScorerConfig, queries: Sequence[QueryInput], k: int) -> list[Band]:
    """Return each query's unrated top-k docs and its score with them all lowest / highest."""
    unrated = [unrated_top(q, k) for q in queries]
    lowest, highest = min(config.scale), max(config.scale)
    pairs = list(zip(queries, unrated, strict=True))
    lows = score_queries(config, [_graded(q, u, lowest) for q, u in pairs])
    highs = score_queries(config, [_graded(q, u, highest) for q, u in pairs])
    return [
        Band(unrated=u, low=_score(lo), high=_score(hi))
        for u, lo, hi in zip(unrated, lows, highs, strict=True)
    ]


def rating_impacts(
    config: ScorerConfig,
    queries: Sequence[QueryInput],
    k: int,
    *,
    scored_queries: int,
    limit: int,
) -> list[Impact]:
    """Return the unrated top-k docs ordered by how far one rating could move the case score.

    A doc's reach is its query's score with that doc at the highest grade minus the score
    with it at the lowest, the others as they are, divided by the number of scored queries
    (the case score is their mean). At most ``limit`` candidates are scored, best ranks first.
    """
    candidates = sorted(
        (
            (rank, index, doc_id)
            for index, query in enumerate(queries)
            for rank, doc in enumerate(query.docs[:k], 1)
            if (doc_id := doc.id) not in query.ratings
        ),
    )[:limit]
    if not candidates:
        return []
    lowest, highest = min(config.scale), max(config.scale)
    lows = score_queries(config, [_graded(queries[i], [d], lowest) for _, i, d in candidates])
    highs = score_queries(config, [_graded(queries[i], [d], highest) for _, i, d in candidates])
    divisor = max(scored_queries, 1)
    impacts = []
    for (rank, index, doc_id), lo, hi in zip(candidates, lows, highs, strict=True):
        low, high = _score(lo), _score(hi)
        points = 0.0 if low is None or high is None else abs(high - low) / divisor
        impacts.append(Impact(query_index=index, doc_id=doc_id, rank=rank, points=points))
    return sorted(impacts, key=lambda i: (-i.points, i.rank, i.query_index))
