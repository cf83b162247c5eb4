"""Limits passed to the JavaScript sandbox per call: time per query, runaway runs."""

from __future__ import annotations

import threading
from typing import Any

import pytest

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


@pytest.mark.slow
def test_one_users_runaway_batches_leave_a_worker_for_another_user() -> None:
    """Six runaway batches of user 1 wait for the workers they may hold; user 2 goes first."""
    runaway = config("javascript", code="while (true) {}", scale=GRADED)
    limits = Limits(time_s=2.5, max_timeouts_in_a_row=1)
    results: dict[int, list[Any]] = {}

    def run_away(index: int) -> None:
        results[index] = score_queries(runaway, [GOOD, GOOD], limits=limits, owner=1)

    threads = [threading.Thread(target=run_away, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    try:
        other = score_queries(config("javascript", code="setScore(2)"), [GOOD], owner=2)
        running = [thread.is_alive() for thread in threads]
    finally:
        for thread in threads:
            thread.join()
    assert other[0].score == 2
    # User 1 holds at most all workers but one, so user 2 did not wait for any of its
    # batches to end (each takes at least its 2.5 s time limit).
    assert running == [True] * 6
    stopped = "stopped: the scorer hit its time limit on 1 queries in a row"
    assert [[o.reason for o in results[i]] for i in range(6)] == [
        ["scorer exceeded its 2.5 s time limit", stopped]
    ] * 6
