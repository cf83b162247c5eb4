"""Is one run really better than another? Paired tests over per-query scores.

Pure functions of two equal-length score arrays (the queries scored in both runs, in the
same order). The randomization test flips the sign of each delta at random with a fixed
seed, so the same two runs always give the same p-value.

With query weights (a case averaged by ``weighted_mean``), every mean is Σ wᵢ·xᵢ / Σ wᵢ;
the randomization test flips the weighted deltas (the statistic is the weighted mean
delta), and the t-test and interval are statsmodels' weighted ones (``DescrStatsW``) with
the weights scaled to sum to n, so that equal weights give exactly the unweighted tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

__all__ = [
    "FLIPS",
    "SEED",
    "SMALL_N",
    "TIE",
    "PairedStats",
    "paired_stats",
    "randomization_p",
    "randomization_ps",
]

TIE = 1e-9
FLIPS = 10_000
SEED = 20_100
# Below this many paired queries a test has too little power to call a change either way.
SMALL_N = 10
# Sign flips drawn per batch: bounds memory at batch times n.
_CHUNK_FLIPS = 2_000


@dataclass(frozen=True)
class PairedStats:
    n: int
    mean_base: float | None
    mean_other: float | None
    mean_delta: float | None
    wins: int
    losses: int
    ties: int
    t_test_p: float | None
    randomization_p: float | None
    ci_low: float | None
    ci_high: float | None
    flips: int
    small_sample: bool


def paired_stats(
    base: Sequence[float],
    other: Sequence[float],
    *,
    weights: Sequence[float] | None = None,
    flips: int = FLIPS,
    seed: int | Sequence[int] = SEED,
    shared_p: float | None = None,
) -> PairedStats:
    """Return means, wins/losses/ties, both p-values and a 95% t interval of other - base
    (weighted by ``weights``, one per pair, when given).

    ``shared_p``: the randomization p already computed for these pairs with the flips of
    other metrics (``randomization_ps``), used instead of drawing flips again.
    """
    if len(base) != len(other) or (weights is not None and len(weights) != len(base)):
        raise ValueError("paired scores (and their weights) need lists of the same length")
    if weights is not None:
        return _weighted_stats(base, other, weights, flips=flips, seed=seed, shared_p=shared_p)
    b = np.asarray(base, dtype=np.float64)
    o = np.asarray(other, dtype=np.float64)
    deltas = o - b
    n = int(deltas.size)
    wins = int(np.count_nonzero(deltas > TIE))
    losses = int(np.count_nonzero(deltas < -TIE))
    ci_low, ci_high = _t_interval(deltas)
    return PairedStats(
        n=n,
        mean_base=float(b.mean()) if n else None,
        mean_other=float(o.mean()) if n else None,
        mean_delta=float(deltas.mean()) if n else None,
        wins=wins,
        losses=losses,
        ties=n - wins - losses,
        t_test_p=_t_test_p(b, o),
        randomization_p=_p(deltas, flips, seed, shared_p) if n else None,
        ci_low=ci_low,
        ci_high=ci_high,
        flips=flips,
        small_sample=n < SMALL_N,
    )


def _weighted_stats(
    base: Sequence[float],
    other: Sequence[float],
    weights: Sequence[float],
    *,
    flips: int,
    seed: int | Sequence[int],
    shared_p: float | None,
) -> PairedStats:
    b = np.asarray(base, dtype=np.float64)
    o = np.asarray(other, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if bool(np.any(~np.isfinite(w))) or bool(np.any(w <= 0)):
        raise ValueError("query weights must be positive numbers")
    deltas = o - b
    n = int(deltas.size)
    wins = int(np.count_nonzero(deltas > TIE))
    losses = int(np.count_nonzero(deltas < -TIE))
    t_p, ci_low, ci_high = None, None, None
    if n >= 2 and not bool(np.all(deltas == deltas[0])):
        from statsmodels.stats.weightstats import DescrStatsW  # a slow import, as in _stats()

        described = DescrStatsW(deltas, weights=w * n / w.sum(), ddof=1)
        p = float(described.ttest_mean(0.0)[1])
        t_p = None if math.isnan(p) else p
        low, high = described.tconfint_mean(alpha=0.05)
        ci_low, ci_high = float(low), float(high)
    elif n >= 2:  # every delta the same: no spread, the interval is that delta
        ci_low = ci_high = float(deltas[0])
    return PairedStats(
        n=n,
        mean_base=float(np.average(b, weights=w)) if n else None,
        mean_other=float(np.average(o, weights=w)) if n else None,
        mean_delta=float(np.average(deltas, weights=w)) if n else None,
        wins=wins,
        losses=losses,
        ties=n - wins - losses,
        t_test_p=t_p,
        randomization_p=_p(w * deltas, flips, seed, shared_p) if n else None,
        ci_low=ci_low,
        ci_high=ci_high,
        flips=flips,
        small_sample=n < SMALL_N,
    )


def _t_test_p(base: np.ndarray, other: np.ndarray) -> float | None:
    deltas = other - base
    if deltas.size < 2 or bool(np.all(deltas == deltas[0])):
        return None
    p = float(_stats().ttest_rel(other, base).pvalue)
    return None if math.isnan(p) else p


def _t_interval(deltas: np.ndarray) -> tuple[float | None, float | None]:
    n = deltas.size
    if n < 2:
        return None, None
    mean = float(deltas.mean())
    half = float(_stats().t.ppf(0.975, n - 1)) * float(deltas.std(ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


def _stats() -> ModuleType:
    # SciPy and statsmodels take a second or more to import; importing them when a test is
    # first computed keeps that cost off the start of every `relevo` command.
    from scipy import stats

    module: ModuleType = stats
    return module


def _p(deltas: np.ndarray, flips: int, seed: int | Sequence[int], shared_p: float | None) -> float:
    if shared_p is not None:
        return shared_p
    return randomization_p(deltas, flips=flips, seed=seed)


def randomization_p(
    deltas: Sequence[float] | np.ndarray, *, flips: int, seed: int | Sequence[int]
) -> float:
    """Return the two-sided paired randomization p = (1 + #{|flipped| ≥ |observed|}) / (1 + flips).

    Compares sums rather than means (the same test: n is fixed) with a tolerance, so the
    flip that changes nothing always counts however the sum is rounded.
    """
    column = np.asarray(deltas, dtype=np.float64).reshape(-1, 1)
    return randomization_ps(column, flips=flips, seed=seed)[0]


def randomization_ps(deltas: np.ndarray, *, flips: int, seed: int | Sequence[int]) -> list[float]:
    """Return the randomization p of every column of ``deltas`` (queries x metrics), all
    from the same sign flips.

    One matrix of flips is drawn from a generator seeded with ``seed`` (the same seed, the
    same p) and multiplied by the deltas once for every metric. A query missing from a
    metric has delta 0 there, which no flip changes. The flips are drawn as random bytes,
    eight queries per byte: the flip matrix is kept as a sparse one-hot of its bytes
    (row f has a 1 at 256·j + byte j of flip f), and table[256·j + v, m] is the sum of
    metric m's deltas of block j whose bits are set in v, so the product of the two is
    each flip's sum of flipped deltas, for every metric at once. Queries unchanged in every
    metric (delta 0) are left out of the flips: flipping them changes nothing.
    """
    from scipy import sparse  # a slow import, as in _stats()

    d = np.asarray(deltas, dtype=np.float64)
    total = d.sum(axis=0)
    observed = np.abs(total)
    tolerance = 1e-9 * np.maximum(1.0, np.abs(d).sum(axis=0))
    # A query whose delta is 0 in every metric changes no flipped sum: it gets no flip.
    d = d[np.any(d != 0.0, axis=1)]
    n, metrics = d.shape
    rng = np.random.default_rng(seed)
    width = max((n + 7) // 8, 1)
    blocks = np.zeros((width * 8, metrics), dtype=np.float64)
    blocks[:n] = d
    byte_bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1)
    table = np.einsum(
        "vb,jbm->jvm", byte_bits.astype(np.float64), blocks.reshape(width, 8, metrics)
    )
    table = table.reshape(width * 256, metrics)
    offsets = np.arange(width, dtype=np.int64) * 256
    ones = np.ones(_CHUNK_FLIPS * width)
    hits = np.zeros(metrics, dtype=np.int64)
    done = 0
    while done < flips:
        size = min(_CHUNK_FLIPS, flips - done)
        raw = rng.integers(0, 256, size=(size, width), dtype=np.uint8)
        # A set bit flips that delta: flipped sum = total - 2 * (sum of the flipped deltas).
        one_hot = sparse.csr_matrix(
            (ones[: size * width], (raw + offsets).ravel(), np.arange(size + 1) * width),
            shape=(size, width * 256),
        )
        flipped = total - 2.0 * (one_hot @ table)
        hits += np.count_nonzero(np.abs(flipped) >= observed - tolerance, axis=0)
        done += size
    return [float((1 + h) / (1 + flips)) for h in hits.tolist()]
