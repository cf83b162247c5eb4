"""Paired statistics agree with scipy and with a plain loop over the same sign flips."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.scoring.significance import SMALL_N, paired_stats, randomization_p


def _scores(seed: int, n: int, shift: float) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 100, n)
    other = np.clip(base + rng.normal(shift, 8, n), 0, 100)
    return base.tolist(), other.tolist()


@pytest.mark.parametrize(("seed", "n", "shift"), [(1, 12, 0.0), (2, 40, 3.0), (3, 300, -1.0)])
def test_t_test_and_interval_equal_scipy(seed: int, n: int, shift: float) -> None:
    base, other = _scores(seed, n, shift)
    result = paired_stats(base, other)
    expected = stats.ttest_rel(other, base)
    assert result.t_test_p == pytest.approx(float(expected.pvalue), rel=1e-12)
    low, high = expected.confidence_interval(0.95)
    assert result.ci_low == pytest.approx(float(low), rel=1e-9)
    assert result.ci_high == pytest.approx(float(high), rel=1e-9)
    deltas = np.subtract(other, base)
    assert result.mean_delta == pytest.approx(float(deltas.mean()))
    assert result.mean_base == pytest.approx(float(np.mean(base)))
    assert result.wins == int((deltas > 1e-9).sum())
    assert result.losses == int((deltas < -1e-9).sum())
    assert result.wins + result.losses + result.ties == n


def test_randomization_p_equals_scipy_permutation_test() -> None:
    base, other = _scores(4, 14, 4.0)
    deltas = np.subtract(other, base)
    # With n = 14 scipy enumerates all 2**14 sign patterns: the exact p-value.
    exact = stats.permutation_test(
        (deltas,),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
    ).pvalue
    assert randomization_p(deltas, flips=50_000, seed=1) == pytest.approx(exact, abs=0.01)


def test_randomization_counts_like_a_plain_loop() -> None:
    deltas = np.array([1.5, -0.5, 2.0, 0.25, 3.0, -1.0, 0.75])
    flips = 20_000
    p = randomization_p(deltas, flips=flips, seed=9)
    # Every sign pattern of 7 deltas: the exact p the sampled one estimates.
    signs = np.array([[1 - 2 * ((m >> i) & 1) for i in range(7)] for m in range(128)])
    exact = np.mean(np.abs(signs @ deltas) >= abs(deltas.sum()) - 1e-12)
    assert p == pytest.approx(exact, abs=0.015)
    assert p == randomization_p(deltas, flips=flips, seed=9)  # reproducible


def test_all_equal_deltas_and_tiny_samples() -> None:
    same = paired_stats([10.0, 20.0, 30.0], [12.0, 22.0, 32.0])
    assert same.t_test_p is None
    assert same.ties == 0 and same.wins == 3
    assert same.small_sample
    # Only the identity and the full flip reach |sum|: p ~ 2/2**3.
    assert same.randomization_p == pytest.approx(0.25, abs=0.02)
    one = paired_stats([50.0], [60.0])
    assert one.t_test_p is None and one.ci_low is None and one.n == 1
    empty = paired_stats([], [])
    assert empty.n == 0 and empty.randomization_p is None and empty.mean_delta is None
    ties = paired_stats([1.0, 2.0], [1.0 + 1e-10, 2.0])
    assert ties.ties == 2
    big = paired_stats(*_scores(5, SMALL_N, 1.0))
    assert not big.small_sample


def test_p_value_formula_with_no_extreme_flip() -> None:
    # 30 equal deltas: a random flip reaches the sum only with probability 2**-29, so the
    # p-value is the "+1" of the observed statistic alone.
    p = randomization_p(np.full(30, 2.0), flips=10_000, seed=3)
    assert p == pytest.approx(1 / 10_001)
