"""Compare's one decision rule: the verdict, its p-value and its sentence agree (pure)."""

from __future__ import annotations

from typing import Any

from app.compare.schemas import CompareStats
from app.compare.stats import decide


def _stats(**changes: Any) -> CompareStats:
    values: dict[str, Any] = {
        "n": 25,
        "mean_base": 70.0,
        "mean_other": 66.3,
        "mean_delta": -3.7,
        "wins": 4,
        "losses": 12,
        "ties": 9,
        "t_test_p": 0.06,
        "randomization_p": 0.035,
        "ci_low": -7.58,
        "ci_high": 0.18,
        "flips": 10_000,
        "small_sample": False,
    }
    return CompareStats(**(values | changes))


def test_with_several_metrics_the_holm_p_decides_and_the_sentence_follows_it() -> None:
    """The audit's page: p 0.035 raw, 0.069 with Holm, an interval across 0."""
    decision = decide(_stats(), p_holm=0.069, metrics=3)
    assert decision.verdict == "no_evidence" and decision.p == 0.069
    assert decision.sentence == (
        "-3.7 points, p = 0.035 (randomization), p = 0.069 with Holm's correction over 3 "
        "metrics, 4 better, 12 worse, 9 unchanged over 25 queries. The difference could well "
        "be chance."
    )
    assert "unlikely" not in decision.sentence


def test_one_metric_whose_tests_disagree_says_so() -> None:
    decision = decide(_stats())
    assert decision.verdict == "tests_disagree" and decision.p == 0.035
    assert decision.sentence.endswith(
        "The tests disagree (p is below 0.05 but the 95% interval, -7.58 to +0.18, includes "
        "0): the change is not established."
    )
    other_way = decide(_stats(randomization_p=0.08, ci_high=-0.2))
    assert other_way.verdict == "tests_disagree"
    assert "the 95% interval, -7.58 to -0.20, excludes 0 but p = 0.08" in other_way.sentence


def test_a_change_is_better_or_worse_only_when_both_hold() -> None:
    worse = decide(_stats(ci_high=-0.4), p_holm=0.03, metrics=2)
    assert worse.verdict == "worse" and worse.p == 0.03
    assert worse.sentence.endswith(
        "The difference is unlikely to be chance (p below 0.05, and the 95% interval, -7.58 "
        "to -0.40, excludes 0)."
    )
    better = decide(_stats(mean_delta=2.0, ci_low=0.5, ci_high=3.5, randomization_p=0.001))
    assert better.verdict == "better" and better.p == 0.001
    assert decide(_stats(n=6, small_sample=True)).verdict == "too_few"
    nothing = decide(_stats(n=0, mean_delta=None))
    assert (nothing.verdict, nothing.p) == ("nothing_to_compare", None)
