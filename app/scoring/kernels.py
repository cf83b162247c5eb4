"""The built-in metrics of SCORING.md as kernels over the arrays of many queries.

Each kernel scores every row of an ``Arrays`` at once with a handful of column operations.
Sums run column by column, left to right, as the per-query definitions (app.scoring.metrics,
kept as the reference the tests compare against) add them: the results agree to the last
bit on integer grades and within 1e-9 otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from app.scoring.arrays import Arrays
from app.scoring.ranking import LOG2

__all__ = [
    "KERNELS",
    "NO_RATED_TOP_CODE",
    "NO_RATINGS_CODE",
    "NO_RELEVANT_CODE",
    "SCORED",
    "Kernel",
    "Scores",
]

NAN = math.nan
_LOG2 = np.asarray(LOG2, dtype=np.float64)

# Status codes of a computed row: scored, or unscored for one of these reasons.
SCORED, NO_RATINGS_CODE, NO_RELEVANT_CODE, NO_RATED_TOP_CODE = 0, 1, 2, 3

# Entries of the query x position x position comparisons of Classic's edit distance, at most.
_LEVENSHTEIN_CELLS = 1 << 22


@dataclass(frozen=True)
class Scores:
    """One metric's results over every row: status code, 0-100 score and raw value."""

    codes: np.ndarray
    scores: np.ndarray
    raws: np.ndarray


def _finish(codes: np.ndarray, raws: np.ndarray, scale: float = 100.0) -> Scores:
    return Scores(codes=codes, scores=scale * raws, raws=raws)


def _discounted(gains: np.ndarray, k: int) -> np.ndarray:
    """Return Σ gains[:, i] / log2(i + 2) over the first k columns, added left to right."""
    total = np.zeros(gains.shape[0])
    for i in range(min(k, gains.shape[1])):
        total = total + gains[:, i] / _LOG2[i]
    return total


def _left_sum(values: np.ndarray) -> np.ndarray:
    total = np.zeros(values.shape[0])
    for i in range(values.shape[1]):
        total = total + values[:, i]
    return total


def _codes(a: Arrays) -> np.ndarray:
    return np.where(a.has_ratings, SCORED, NO_RATINGS_CODE)


def _top(a: Arrays, k: int) -> np.ndarray:
    return _pad(a.grades[:, :k], k)


def _pad(columns: np.ndarray, width: int) -> np.ndarray:
    """Return the columns with NaN columns added up to ``width``."""
    if columns.shape[1] >= width:
        return columns
    pad = np.full((columns.shape[0], width - columns.shape[1]), NAN)
    return np.concatenate([columns, pad], axis=1)


def _gain(kind: str) -> Callable[[np.ndarray], np.ndarray]:
    if kind == "exponential":
        return lambda r: np.power(2.0, r) - 1
    return lambda r: r


def _scalar_gain(kind: str, value: float) -> float:
    return float(2.0**value - 1) if kind == "exponential" else value


def _ideal_max(kind: str, top: float, k: int) -> float:
    # As the reference: Σ gain(max) / log2(i + 2) over the k positions, in Python floats.
    best = _scalar_gain(kind, top)
    return float(sum(best / d for d in LOG2[:k]))


def classic(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """Quepid's default: floor(avgRating100) minus the edit distance from the best order."""
    k = int(params["k"])
    length_a = np.minimum(a.lengths, k)
    length_b = np.maximum(length_a, np.minimum(k, np.bincount(a.owners, minlength=a.size)))
    width = max(int(length_b.max(initial=0)), 1)  # both lists fit in it
    ranked = _top(a, width)  # A, NaN for null (unrated or past the end)
    rated = ~np.isnan(ranked)
    count = rated.sum(axis=1)
    total = _left_sum(np.where(rated, ranked, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        avg100 = np.floor(total / count * 100 / top)
    best = _pad(a.ideal[:, :width], width)  # B: the best ratings, NaN (null) after
    distance = _levenshtein(ranked, best, length_a, length_b)
    raws = np.maximum(0.0, np.where(count > 0, avg100, 0.0) - distance)
    codes = np.where(count > 0, SCORED, NO_RATED_TOP_CODE)
    codes = np.where(a.has_ratings, codes, NO_RATINGS_CODE)
    return Scores(codes=codes, scores=raws, raws=raws)


def _levenshtein(
    a: np.ndarray, b: np.ndarray, length_a: np.ndarray, length_b: np.ndarray
) -> np.ndarray:
    """Return the edit distance of a[q, :length_a[q]] and b[q, :length_b[q]] for every q.

    NaN equals NaN (null equals null). One row of the Wagner-Fischer table per step, for
    all queries at once: within a row, D[i][j] = min over j' <= j of t[j'] + (j - j'), a
    running minimum.
    """
    size, width = a.shape
    rows = max(1, _LEVENSHTEIN_CELLS // (width * width))
    if size > rows:  # bounds the memory of the size x width x width comparisons
        return np.concatenate(
            [
                _levenshtein(
                    a[i : i + rows], b[i : i + rows], length_a[i : i + rows], length_b[i : i + rows]
                )
                for i in range(0, size, rows)
            ]
        )
    same = (a[:, :, None] == b[:, None, :]) | (np.isnan(a)[:, :, None] & np.isnan(b)[:, None, :])
    steps = np.arange(width + 1)
    row = np.broadcast_to(steps, (size, width + 1)).astype(np.int64)
    result = row[np.arange(size), length_b].copy()  # length_a == 0: insert every entry
    for i in range(1, width + 1):
        cost = np.where(same[:, i - 1, :], 0, 1)
        cand = np.empty_like(row)
        cand[:, 0] = i
        cand[:, 1:] = np.minimum(row[:, 1:] + 1, row[:, :-1] + cost)
        row = np.minimum.accumulate(cand - steps, axis=1) + steps
        here = length_a == i
        result[here] = row[here, length_b[here]]
    return cast(np.ndarray, result)


def ndcg(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """NDCG@k with the configured gain, ideal list and treatment of unrated docs."""
    k = int(params["k"])
    gain = _gain(params["gain"])
    ideal_kind: str = params["ideal"]
    if params["unrated"] == "skip":
        # The rated docs in rank order: a stable sort moves the unrated ones after them.
        order = np.argsort(np.isnan(a.grades), axis=1, kind="stable")
        actual = np.take_along_axis(a.grades, order, axis=1)[:, :k]
    else:
        actual = a.grades[:, :k]
    dcg = _discounted(gain(np.nan_to_num(actual, nan=0.0)), k)
    if ideal_kind == "max":
        idcg = np.full(a.size, _ideal_max(params["gain"], top, k))
    else:
        # rated: every rating of the query; results: the returned rated docs (NaN last).
        best = a.ideal[:, :k] if ideal_kind == "rated" else -np.sort(-a.grades, axis=1)[:, :k]
        idcg = _discounted(gain(np.nan_to_num(best, nan=0.0)), k)
    with np.errstate(invalid="ignore", divide="ignore"):
        raws = np.where(a.lengths > 0, dcg / idcg, 0.0)
    codes = np.where((idcg <= 0) & (a.lengths > 0), NO_RELEVANT_CODE, SCORED)
    codes = np.where(a.has_ratings, codes, NO_RATINGS_CODE)
    return _finish(codes, raws)


def dcg(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """DCG@k, scored against gain(max) at every one of the k positions."""
    k = int(params["k"])
    raws = _discounted(_gain(params["gain"])(np.nan_to_num(a.grades, nan=0.0)), k)
    norm = _ideal_max(params["gain"], top, k)
    return Scores(codes=_codes(a), scores=100 * raws / norm, raws=raws)


def cg(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """The cumulative gain of the top k, scored against k x max."""
    k = int(params["k"])
    raws = _left_sum(np.nan_to_num(a.grades[:, :k], nan=0.0))
    return Scores(codes=_codes(a), scores=100 * raws / (k * top), raws=raws)


def _flags(a: Arrays, params: Mapping[str, Any]) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        flags = a.grades[:, : int(params["k"])] >= params["threshold"]  # NaN: not relevant
    return cast(np.ndarray, flags)


def precision(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """Relevant docs among the top m, over m (0 when nothing was returned)."""
    shown = np.minimum(a.lengths, int(params["k"]))
    hits = _flags(a, params).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        raws = np.where(shown > 0, hits / shown, 0.0)
    return _finish(_codes(a), raws)


def average_precision(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """AP@k over every relevant rated doc of the query."""
    flags = _flags(a, params)
    hits = np.cumsum(flags, axis=1)
    positions = np.arange(1, flags.shape[1] + 1)
    total = _left_sum(np.where(flags, hits / positions, 0.0))
    relevant = np.bincount(
        a.owners, weights=a.values >= params["threshold"], minlength=a.size
    ).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        raws = np.where(relevant > 0, total / relevant, 0.0)
    codes = np.where(relevant > 0, SCORED, NO_RELEVANT_CODE)
    codes = np.where(a.has_ratings, codes, NO_RATINGS_CODE)
    return _finish(codes, raws)


def reciprocal_rank(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """1 / rank of the first relevant doc in the top k, or 0."""
    flags = _flags(a, params)
    found = flags.any(axis=1)
    first = np.argmax(flags, axis=1) + 1
    raws = np.where(found, 1 / first, 0.0)
    return _finish(_codes(a), raws)


def err(a: Arrays, params: Mapping[str, Any], top: float) -> Scores:
    """Expected reciprocal rank over the top k."""
    k = int(params["k"])
    denominator = 2.0**top
    stops = (np.power(2.0, np.nan_to_num(a.grades[:, :k], nan=0.0)) - 1) / denominator
    raws = np.zeros(a.size)
    going = np.ones(a.size)
    for i in range(stops.shape[1]):
        stop = stops[:, i]
        raws = raws + going * stop / (i + 1)
        going = going * (1 - stop)
    return _finish(_codes(a), raws)


Kernel = Callable[[Arrays, Mapping[str, Any], float], Scores]
KERNELS: dict[str, Kernel] = {
    "classic": classic,
    "ndcg": ndcg,
    "dcg": dcg,
    "cg": cg,
    "precision": precision,
    "average_precision": average_precision,
    "reciprocal_rank": reciprocal_rank,
    "err": err,
}
