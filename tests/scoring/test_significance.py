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


def test_equal_weights_give_the_unweighted_statistics() -> None:
    base, other = _scores(5, 30, 2.0)
    plain = paired_stats(base, other)
    weighted = paired_stats(base, other, weights=[2.5] * 30)
    for name in ("mean_delta", "mean_base", "mean_other", "t_test_p", "ci_low", "ci_high"):
        assert getattr(weighted, name) == pytest.approx(getattr(plain, name), rel=1e-12)
    assert weighted.randomization_p == plain.randomization_p
    assert (weighted.wins, weighted.losses, weighted.ties) == (plain.wins, plain.losses, plain.ties)


def test_weighted_statistics_by_hand() -> None:
    # Weighted mean Σ wᵢ·dᵢ / Σ wᵢ; the t-test with the weights scaled to sum to n (analytic
    # weights): var = Σ w'ᵢ (dᵢ - m)² / (n - 1), se = √(var / n), t on n - 1 degrees.
    base = [50.0, 60.0, 40.0, 70.0, 30.0, 55.0]
    other = [60.0, 58.0, 55.0, 71.0, 29.0, 70.0]
    weights = [3.0, 1.0, 2.0, 1.0, 0.5, 2.5]
    d = np.subtract(other, base)
    w = np.asarray(weights)
    m = float((w * d).sum() / w.sum())
    scaled = w * len(d) / w.sum()
    var = float((scaled * (d - m) ** 2).sum() / (len(d) - 1))
    se = (var / len(d)) ** 0.5
    t = m / se
    p = float(2 * stats.t.sf(abs(t), len(d) - 1))
    half = float(stats.t.ppf(0.975, len(d) - 1)) * se
    result = paired_stats(base, other, weights=weights)
    assert result.mean_delta == pytest.approx(m, rel=1e-12)
    assert m == pytest.approx(9.6, rel=1e-12)  # (30 - 2 + 30 + 1 - 0.5 + 37.5) / 10
    assert result.mean_base == pytest.approx(float((w * np.asarray(base)).sum() / w.sum()))
    assert result.t_test_p == pytest.approx(p, rel=1e-9)
    assert result.ci_low == pytest.approx(m - half, rel=1e-9)
    assert result.ci_high == pytest.approx(m + half, rel=1e-9)
    # The randomization test flips the weighted deltas: the statistic is the weighted mean.
    assert result.randomization_p == randomization_p(w * d, flips=10_000, seed=20_100)
    assert (result.wins, result.losses, result.ties) == (4, 2, 0)
    assert result.mean_delta != pytest.approx(float(d.mean()))  # the weights matter


def test_weights_must_be_positive() -> None:
    with pytest.raises(ValueError, match="weights must be positive"):
        paired_stats([1.0, 2.0], [2.0, 3.0], weights=[1.0, 0.0])
    with pytest.raises(ValueError, match="same length"):
        paired_stats([1.0, 2.0], [2.0, 3.0], weights=[1.0])
