"""Ranking helpers shared by the built-in metrics and the JavaScript environment."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

DEFAULT_K = 10
MAX_K = 1000

# LOG2[i] = log2(i + 2): the discount of 0-based position i, precomputed once for speed.
LOG2: tuple[float, ...] = tuple(math.log2(i + 2) for i in range(MAX_K))


def _best_key(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


def best_order(ratings: Mapping[str, float]) -> list[tuple[str, float]]:
    """Return every rated doc as (doc_id, rating), rating descending, ties by doc_id."""
    return sorted(ratings.items(), key=_best_key)


def mean(values: Sequence[float]) -> float:
    """Return the arithmetic mean, adding left to right as JavaScript does."""
    total = 0.0
    for value in values:
        total += value
    return total / len(values)


def avg_rating100(rated: Sequence[float], top: float) -> int:
    """Return floor(mean x 100 / top) of a non-empty list of ratings."""
    return math.floor(mean(rated) * 100 / top)


def levenshtein(a: Sequence[object], b: Sequence[object]) -> int:
    """Return the edit distance between two lists (insert/delete/substitute cost 1)."""
    # Hyyrö's bit-parallel form of Myers' algorithm: one pass over b with a bit per entry
    # of a; entries compare by hash and ==, so None matches None and 1 matches 1.0.
    # Common ends cost nothing: a ranking is often right at the top and unrated at the
    # bottom, so trimming them leaves a short middle (or nothing) for the bit loop.
    start, end_a, end_b = 0, len(a), len(b)
    while start < end_a and start < end_b and a[start] == b[start]:
        start += 1
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    a, b = a[start:end_a], b[start:end_b]
    if not a or not b:
        return len(a) + len(b)
    match: dict[object, int] = {}
    for i, x in enumerate(a):
        match[x] = match.get(x, 0) | (1 << i)
    full = (1 << len(a)) - 1
    last = 1 << (len(a) - 1)
    plus, minus, distance = full, 0, len(a)
    for y in b:
        eq = match.get(y, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        h_plus = minus | (~(xh | plus) & full)
        h_minus = plus & xh
        if h_plus & last:
            distance += 1
        elif h_minus & last:
            distance -= 1
        h_plus = ((h_plus << 1) | 1) & full
        h_minus = (h_minus << 1) & full
        plus = h_minus | (~(xv | h_plus) & full)
        minus = h_plus & xv
    return distance


def distance_from_best(
    top: Sequence[float | None], best: Sequence[tuple[str, float]], k: int
) -> int:
    """Return the edit distance between the top ratings and the best ratings padded to match."""
    wanted: list[float | None] = [rating for _, rating in best[:k]]
    wanted.extend([None] * (len(top) - len(wanted)))
    return levenshtein(top, wanted)


def smallest_positive(scale: Sequence[float]) -> float:
    """Return the default relevance threshold: the smallest positive scale value."""
    positive = [value for value in scale if value > 0]
    # A scale without positive values has no natural "relevant" level; use its top.
    return min(positive) if positive else max(scale)
