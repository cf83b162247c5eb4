"""One rating from several raters' numeric judgements of a pair: a book's sync into a case, and
the people's majority that judges are checked against.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Literal

__all__ = ["ConsensusMethod", "aggregate"]

ConsensusMethod = Literal["mean", "median", "majority", "rater"]


def aggregate(method: ConsensusMethod, ratings: Sequence[float]) -> float | None:
    """Return one rating from a pair's numeric judgements (None when there are none).

    mean; median (an even count gives the mean of the two middle values); majority
    (the most frequent value, ties going to the lower rating). "rater" takes the one
    rater's judgement, so the caller passes just that one.
    """
    if not ratings:
        return None
    if method == "mean":
        return float(statistics.fmean(ratings))
    if method == "median":
        return float(statistics.median(ratings))
    if method == "majority":
        counts = Counter(ratings)
        top = max(counts.values())
        return float(min(value for value, count in counts.items() if count == top))
    return float(ratings[0])
