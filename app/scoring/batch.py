"""The built-in metrics of SCORING.md over many queries at once, as numpy arrays.

The pass has three parts: ``app.scoring.arrays`` builds the arrays from the queries once
(every ranking a row of grades, every query's ratings in its ideal order);
``app.scoring.kernels`` holds one kernel per metric, a handful of column operations over
all rows; and this module ties them: it picks the kernel of a config, reads negative grades
as 0 where the metric is graded, and turns the rows' status codes into outcomes. The arrays
are shared by every metric scored in the pass.

The kernels add column by column, left to right, as the per-query definitions
(app.scoring.metrics, kept as the reference the tests compare against) do: the results agree
to the last bit on integer grades and within 1e-9 otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from app.scoring.arrays import Arrays, Need, build_arrays, needs
from app.scoring.kernels import (
    KERNELS,
    NO_RATED_TOP_CODE,
    NO_RATINGS_CODE,
    NO_RELEVANT_CODE,
    SCORED,
    Scores,
)
from app.scoring.metrics import GRADED_KINDS, NO_RATED_TOP, NO_RATINGS, NO_RELEVANT
from app.scoring.types import Outcome, scored

__all__ = ["SCORED", "Arrays", "Need", "Scores", "build_arrays", "compute", "needs", "outcomes"]

UNSCORED_OUTCOMES: dict[int, Outcome] = {
    NO_RATINGS_CODE: NO_RATINGS,
    NO_RELEVANT_CODE: NO_RELEVANT,
    NO_RATED_TOP_CODE: NO_RATED_TOP,
}


def compute(a: Arrays, kind: str, params: Mapping[str, Any], scale: Sequence[float]) -> Scores:
    """Return one built-in metric over every row of the arrays."""
    source = a.clamped() if scale[0] < 0 and kind in GRADED_KINDS else a
    with np.errstate(all="ignore"):
        return KERNELS[kind](source, params, scale[-1])


def outcomes(found: Scores) -> list[Outcome]:
    """Return the outcome of every row, in order."""
    unscored = UNSCORED_OUTCOMES
    return [
        scored(score, raw) if code == SCORED else unscored[code]
        for code, score, raw in zip(
            found.codes.tolist(), found.scores.tolist(), found.raws.tolist(), strict=True
        )
    ]
