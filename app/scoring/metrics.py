"""The built-in metrics of SCORING.md, one query at a time: the reference definitions.

Scores are computed by the array pass (app.scoring.batch), many queries at once; these
closures say the same thing query by query, and the tests hold the arrays to them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Mapping
from itertools import repeat
from operator import attrgetter, truediv
from typing import Any

from app.scoring.ranking import LOG2, avg_rating100, best_order, distance_from_best
from app.scoring.types import Outcome, QueryInput, StoredDocs, doc_ids, scored, unscored
from app.vocabulary import ScorerKind

Metric = Callable[[QueryInput], Outcome]

NO_RATINGS = unscored("no ratings")
NO_RELEVANT = unscored("no relevant ratings")
NO_RATED_TOP = unscored("no rated documents in the top k")
ZERO = scored(0.0, 0.0)


def _gain(kind: str) -> Callable[[float], float]:
    if kind == "exponential":
        return lambda r: 2.0**r - 1
    return lambda r: r


def _ideal_max(gain: Callable[[float], float], top: float, k: int) -> float:
    return float(sum(map(truediv, [gain(top)] * k, LOG2)))


def _largest(values: Collection[float], k: int) -> list[float]:
    return sorted(values, reverse=True)[:k] if len(values) <= 4 * k else heapq.nlargest(k, values)


def classic(params: Mapping[str, Any], top: float) -> Metric:
    """Return Quepid's default scorer: avgRating100 minus the edit distance from best."""
    k: int = params["k"]

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        get = ratings.get
        ranked = [get(doc) for doc in doc_ids(query.docs)[:k]]
        rated = [r for r in ranked if r is not None]
        if not rated:
            return NO_RATED_TOP
        distance = distance_from_best(ranked, best_order(ratings), k)
        score = float(max(0, avg_rating100(rated, top) - distance))
        return scored(score, score)

    return run


_doc_id = attrgetter("id")
_ZEROS = repeat(0)


def _ndcg_default(k: int) -> Metric:
    """NDCG with linear gain, rated ideal and unrated as 0: the preset, kept on a fast path."""
    discounts = LOG2[:k]  # map() stops at the shorter list: no slicing per query

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        docs = query.docs
        if not docs:
            return ZERO
        values = ratings.values()
        best = sorted(values, reverse=True) if len(values) <= 4 * k else _largest(values, k)
        idcg = sum(map(truediv, best, discounts))
        if idcg <= 0:
            return NO_RELEVANT
        ids = docs.iter_ids() if isinstance(docs, StoredDocs) else map(_doc_id, docs)
        gains = map(ratings.get, ids, _ZEROS)  # unrated counts as 0
        raw = sum(map(truediv, gains, discounts)) / idcg
        return scored(100 * raw, raw)

    return run


def ndcg(params: Mapping[str, Any], top: float) -> Metric:
    """Return NDCG@k with the configured gain, ideal list and treatment of unrated docs."""
    k: int = params["k"]
    exponential = params["gain"] == "exponential"
    skip = params["unrated"] == "skip"
    ideal: str = params["ideal"]
    if not exponential and not skip and ideal == "rated":
        return _ndcg_default(k)
    gain = _gain(params["gain"])
    max_idcg = _ideal_max(gain, top, k)

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        docs = query.docs
        if not docs:
            # SCORING.md: zero results with ratings present score 0, whatever the ideal.
            return ZERO
        get = ratings.get
        ids = doc_ids(docs)
        if skip:
            actual = [r for r in [get(doc) for doc in ids] if r is not None][:k]
        else:
            actual = [get(doc, 0) for doc in ids[:k]]
        best: list[float] = []
        if ideal == "rated":
            best = _largest(ratings.values(), k)
        elif ideal == "results":
            best = _largest([r for r in [get(doc) for doc in ids] if r is not None], k)
        if exponential:
            actual = [2.0**r - 1 for r in actual]
            best = [2.0**r - 1 for r in best]
        idcg = max_idcg if ideal == "max" else sum(map(truediv, best, LOG2))
        if idcg <= 0:
            return NO_RELEVANT
        raw = sum(map(truediv, actual, LOG2)) / idcg
        return scored(100 * raw, raw)

    return run


def dcg(params: Mapping[str, Any], top: float) -> Metric:
    """Return DCG@k, scored against gain(max) at every one of the k positions."""
    k: int = params["k"]
    gain = _gain(params["gain"])
    norm = _ideal_max(gain, top, k)

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        get = ratings.get
        raw = sum(map(truediv, [gain(get(doc, 0)) for doc in doc_ids(query.docs)[:k]], LOG2))
        return scored(100 * raw / norm, raw)

    return run


def cg(params: Mapping[str, Any], top: float) -> Metric:
    """Return the cumulative gain of the top k, scored against k x max."""
    k: int = params["k"]
    norm = k * top

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        get = ratings.get
        raw = 0.0
        for doc in doc_ids(query.docs)[:k]:
            raw += get(doc, 0)
        return scored(100 * raw / norm, raw)

    return run


def _relevance(query: QueryInput, k: int, threshold: float) -> list[bool]:
    get = query.ratings.get
    flags = []
    for doc in doc_ids(query.docs)[:k]:
        rating = get(doc)
        flags.append(rating is not None and rating >= threshold)
    return flags


def _from_flags(params: Mapping[str, Any], reduce: Callable[[list[bool]], float]) -> Metric:
    """Return a metric computed from the relevance flags of the top k alone."""
    k: int = params["k"]
    threshold: float = params["threshold"]

    def run(query: QueryInput) -> Outcome:
        if not query.ratings:
            return NO_RATINGS
        raw = reduce(_relevance(query, k, threshold))
        return scored(100 * raw, raw)

    return run


def precision(params: Mapping[str, Any], top: float) -> Metric:
    """Return precision@k: relevant docs among the top m over m."""
    return _from_flags(params, lambda flags: sum(flags) / len(flags) if flags else 0.0)


def average_precision(params: Mapping[str, Any], top: float) -> Metric:
    """Return AP@k over all relevant rated docs of the query."""
    k: int = params["k"]
    threshold: float = params["threshold"]

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        relevant = sum(1 for rating in ratings.values() if rating >= threshold)
        if not relevant:
            return NO_RELEVANT
        hits, total = 0, 0.0
        for position, flag in enumerate(_relevance(query, k, threshold), 1):
            if flag:
                hits += 1
                total += hits / position
        raw = total / relevant
        return scored(100 * raw, raw)

    return run


def reciprocal_rank(params: Mapping[str, Any], top: float) -> Metric:
    """Return 1 / rank of the first relevant doc in the top k, or 0."""
    return _from_flags(params, lambda flags: 1 / (flags.index(True) + 1) if True in flags else 0.0)


def err(params: Mapping[str, Any], top: float) -> Metric:
    """Return expected reciprocal rank over the top k."""
    k: int = params["k"]
    denominator = 2.0**top

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if not ratings:
            return NO_RATINGS
        get = ratings.get
        raw, not_stopped = 0.0, 1.0
        for position, doc in enumerate(doc_ids(query.docs)[:k], 1):
            rating = get(doc)
            stop = 0.0 if rating is None else (2.0**rating - 1) / denominator
            raw += not_stopped * stop / position
            not_stopped *= 1 - stop
        return scored(100 * raw, raw)

    return run


# The kinds whose value grows with the grade itself (not only with grade >= threshold).
GRADED_KINDS = frozenset(
    {ScorerKind.CLASSIC, ScorerKind.NDCG, ScorerKind.DCG, ScorerKind.CG, ScorerKind.ERR}
)


def without_negative_gain(metric: Metric) -> Metric:
    """Return the metric reading a negative grade as 0: judged, no gain (as trec_eval does).

    On a scale such as -1..4 (trec_eval's qrels.rel_level) a negative grade would otherwise
    subtract from a DCG, a CG or a mean. The thresholded kinds need no such step: a negative
    grade is below any positive threshold.
    """

    def run(query: QueryInput) -> Outcome:
        ratings = query.ratings
        if any(rating < 0 for rating in ratings.values()):
            ratings = {doc: max(rating, 0.0) for doc, rating in ratings.items()}
            query = query._replace(ratings=ratings)
        return metric(query)

    return run


METRICS: dict[str, Callable[[Mapping[str, Any], float], Metric]] = {
    ScorerKind.CLASSIC: classic,
    ScorerKind.NDCG: ndcg,
    ScorerKind.DCG: dcg,
    ScorerKind.CG: cg,
    ScorerKind.PRECISION: precision,
    ScorerKind.AVERAGE_PRECISION: average_precision,
    ScorerKind.RECIPROCAL_RANK: reciprocal_rank,
    ScorerKind.ERR: err,
}
