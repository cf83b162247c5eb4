"""Overlap of two rankings without any ratings: Jaccard and extrapolated rank-biased overlap.

RBO follows Webber, Moffat and Zobel, "A similarity measure for indefinite rankings"
(TOIS 2010), equation 32: the extrapolated RBO of a shorter list S (length s) and a longer
list L (length l), which assumes the agreement seen at the end of the lists goes on:

    RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
              + ((X_l - X_s)/l + X_s/s) p^l

where X_d is the number of items the two lists share in their first d (for d > s, all of S
against the first d of L). Equal lengths reduce it to equation 30.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DEFAULT_P", "jaccard", "rbo_ext"]

DEFAULT_P = 0.9


def _unique(items: Sequence[str]) -> list[str]:
    # A ranking names each doc once; a repeated id keeps its first (best) rank.
    return list(dict.fromkeys(items))


def jaccard(first: Sequence[str], second: Sequence[str]) -> float:
    """Return intersection size over union size of two id lists; 1 when both are empty."""
    a, b = set(first), set(second)
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


def rbo_ext(first: Sequence[str], second: Sequence[str], p: float = DEFAULT_P) -> float:
    """Return the extrapolated rank-biased overlap of two rankings (eq. 32).

    Two empty rankings agree completely (1); an empty and a non-empty one not at all (0).
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be between 0 and 1, not {p}")
    a, b = _unique(first), _unique(second)
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, big = len(short), len(long)
    if s == 0:
        return 1.0 if big == 0 else 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0  # X_d, kept up to date one depth at a time
    weighted = 0.0
    weight = 1.0
    x_s = 0
    for d in range(1, big + 1):
        weight *= p
        item = long[d - 1]
        if d <= s:
            mine = short[d - 1]
            if mine == item:
                overlap += 1
            else:
                overlap += (mine in seen_long) + (item in seen_short)
            seen_short.add(mine)
            seen_long.add(item)
            if d == s:
                x_s = overlap
            weighted += overlap / d * weight
        else:
            overlap += item in seen_short
            weighted += (overlap / d + x_s * (d - s) / (s * d)) * weight
    tail = ((overlap - x_s) / big + x_s / s) * weight
    return (1 - p) / p * weighted + tail
