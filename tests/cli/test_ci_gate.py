"""The bars of `relevo run --fail-under`: what each failing bar says (pure, no database)."""

from __future__ import annotations

import pytest

from app.cli import ci
from app.runs.schemas import MetricRead


def _metric(name: str, score: float | None, scored: int) -> MetricRead:
    return MetricRead(scorer_id=len(name), name=name, case_score=score, scored=scored)


def test_a_bar_over_nothing_scored_fails_and_says_why() -> None:
    metrics = [_metric("NDCG@10", None, 0), _metric("P@10", None, 0)]
    bars = [ci.Bar(None, 50.0), ci.Bar("p@10", 0.0)]
    failed = ci.under_bars(metrics, bars, case_score=None, tag="head")
    assert failed == [
        "Case score (NDCG@10) over the queries tagged 'head' has no score: none of the "
        "queries tagged 'head' was scored (each errored or has no relevant rating), so it "
        "cannot reach 50.",
        "P@10 over the queries tagged 'head' has no score: none of the queries tagged 'head' "
        "was scored (each errored or has no relevant rating), so it cannot reach 0.",
    ]
    untagged = ci.under_bars(metrics, [ci.Bar(None, 1.0)], case_score=None)
    assert untagged == [
        "Case score (NDCG@10) has no score: none of the case's queries was scored (each "
        "errored or has no relevant rating), so it cannot reach 1."
    ]


def test_bars_name_their_metric_and_only_the_missed_ones_fail() -> None:
    metrics = [_metric("NDCG@10", 68.655, 20), _metric("ERR@10", 91.0, 20)]
    bars = [ci.Bar(None, 70.0), ci.Bar("err@10", 90.0)]
    assert ci.under_bars(metrics, bars, case_score=68.655) == [
        "Case score (NDCG@10) 68.66 is below 70."
    ]
    with pytest.raises(ci.UnknownMetric, match="No metric named 'map@3'"):
        ci.under_bars(metrics, [ci.Bar("map@3", 1.0)], case_score=68.655)
