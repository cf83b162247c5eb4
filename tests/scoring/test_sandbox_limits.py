"""Limits passed to the JavaScript sandbox per call: time per query, runaway runs."""

from __future__ import annotations

from typing import Any

from app.scoring import Limits, score_queries
from tests.scoring.helpers import GRADED, config, query

GOOD = query("ab", {"a": 3, "b": 1})
BAD = query("ab", {"a": 2}, query_options={"bad": True})


def guarded(code: str) -> Any:
    """Return a scorer that runs code on queries with option bad and scores the others."""
    body = f"if (qOption('bad')) {{ {code} }} else {{ setScore(docRating(0) * 10); }}"
    return config("javascript", code=body, scale=GRADED)


def test_a_run_that_keeps_timing_out_is_stopped() -> None:
    limits = Limits(time_s=0.1, max_timeouts_in_a_row=3)
    queries = [GOOD, BAD, BAD, GOOD, BAD, BAD, BAD, BAD, GOOD, BAD]
    outcomes = score_queries(guarded("while (true) {}"), queries, limits=limits)
    timeout = "scorer exceeded its 0.1 s time limit"
    stopped = "stopped: the scorer hit its time limit on 3 queries in a row"
    # The good query between the first two timeouts and the next three resets the count.
    assert [o.reason for o in outcomes] == [
        None, timeout, timeout, None, timeout, timeout, timeout, stopped, stopped, stopped
    ]  # fmt: skip
    assert [outcomes[0].score, outcomes[3].score] == [30, 30]
