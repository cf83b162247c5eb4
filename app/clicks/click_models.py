"""Click models over numpy: COEC, PBM (position bias by EM) and SDBN (DBN is in dbn.py).

Input is one row per impression (a doc shown at a rank in one search session): the session,
the (query text, doc) pair, the 1-based rank, and the impression's value: 0 when nothing was
done with it, else the weight of its strongest action (a click 1, a purchase perhaps 3).
Every model works on the click itself (value > 0); the weights then scale a pair's estimate
by its mean value per click, so a doc that is bought when clicked ranks above one that is
only clicked. No per-impression Python loop: sums are `np.bincount`s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import chi2, norm

__all__ = ["Estimates", "Impressions", "coec", "ctr_by_rank", "pbm", "sdbn"]

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Z95 = float(norm.ppf(0.975))


@dataclass(frozen=True)
class Impressions:
    """The log as parallel arrays, one entry per impression."""

    session: Ints
    pair: Ints
    rank: Ints
    value: Floats
    n_pairs: int

    @property
    def clicked(self) -> Floats:
        """1.0 where the impression drew any action, else 0.0."""
        return (self.value > 0).astype(np.float64)


@dataclass(frozen=True)
class Estimates:
    """Per pair: impressions, clicks, clicks expected from rank alone, estimate, 95% interval."""

    impressions: Ints
    clicks: Ints
    expected_clicks: Floats
    estimate: Floats
    ci_low: Floats
    ci_high: Floats


def _per_pair(log: Impressions, weights: Floats) -> Floats:
    return np.bincount(log.pair, weights=weights, minlength=log.n_pairs).astype(np.float64)


def ctr_by_rank(log: Impressions, max_rank: int) -> Floats:
    """Return CTR at ranks 0..max_rank (index 0 unused): clicks at r / impressions at r."""
    shown = np.bincount(log.rank, minlength=max_rank + 1)[: max_rank + 1]
    clicked = np.bincount(log.rank, weights=log.clicked, minlength=max_rank + 1)[: max_rank + 1]
    return np.divide(clicked, shown, out=np.zeros(max_rank + 1), where=shown > 0)


def _value_per_click(log: Impressions) -> Floats:
    clicks = _per_pair(log, log.clicked)
    value = _per_pair(log, log.value)
    return np.divide(value, clicks, out=np.ones(log.n_pairs), where=clicks > 0)


def wilson(successes: Floats, trials: Floats) -> tuple[Floats, Floats]:
    """Return Wilson's 95% interval of a proportion (0..1 where there were no trials)."""
    n = np.maximum(trials, 1e-12)
    p = np.clip(successes / n, 0.0, 1.0)
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * np.sqrt(p * (1 - p) / n + Z95**2 / (4 * n**2)) / (1 + Z95**2 / n)
    empty = trials <= 0
    return np.where(empty, 0.0, centre - half), np.where(empty, 1.0, centre + half)


def _base(log: Impressions, max_rank: int) -> tuple[Ints, Ints, Floats]:
    ctr = ctr_by_rank(log, max_rank)
    impressions = np.bincount(log.pair, minlength=log.n_pairs).astype(np.int64)
    clicks = _per_pair(log, log.clicked).round().astype(np.int64)
    return impressions, clicks, _per_pair(log, ctr[log.rank])


def coec(log: Impressions, *, max_rank: int = 20) -> Estimates:
    """Return clicks over expected clicks: Σ value / Σ CTR(rank) over the pair's impressions.

    The interval is Garwood's exact Poisson interval of the click count, scaled the same way.
    """
    impressions, clicks, expected = _base(log, max_rank)
    value = _per_pair(log, log.value)
    low = np.where(clicks > 0, chi2.ppf(0.025, 2 * clicks) / 2, 0.0)
    high = chi2.ppf(0.975, 2 * clicks + 2) / 2
    scale = np.divide(value, clicks, out=np.ones(log.n_pairs), where=clicks > 0)
    safe = np.where(expected > 0, expected, np.inf)
    return Estimates(
        impressions=impressions,
        clicks=clicks,
        expected_clicks=expected,
        estimate=value / safe,
        ci_low=low * scale / safe,
        ci_high=np.where(expected > 0, high * scale / safe, np.inf),
    )


def pbm(
    log: Impressions, *, max_rank: int = 20, iterations: int = 100, init: float = 0.5
) -> Estimates:
    """Return each pair's attractiveness under the position-based model, fitted by EM.

    P(click) = θ(rank) · a(pair); both are learnt from the log. The interval is Wilson's on
    a with the pair's expected number of examinations (Σ θ over its impressions) as trials.
    """
    impressions, clicks, expected = _base(log, max_rank)
    c = log.clicked
    alpha = np.full(log.n_pairs, init)
    theta = np.full(max_rank + 1, init)
    per_rank = np.bincount(log.rank, minlength=max_rank + 1)[: max_rank + 1].astype(np.float64)
    per_pair = np.maximum(impressions.astype(np.float64), 1.0)
    for _ in range(iterations):
        a, t = alpha[log.pair], theta[log.rank]
        unclicked = np.maximum(1.0 - a * t, 1e-12)
        relevant = c + (1 - c) * a * (1 - t) / unclicked
        examined = c + (1 - c) * t * (1 - a) / unclicked
        alpha = _per_pair(log, relevant) / per_pair
        summed = np.bincount(log.rank, weights=examined, minlength=max_rank + 1)[: max_rank + 1]
        theta = np.divide(summed, per_rank, out=np.full(max_rank + 1, init), where=per_rank > 0)
    trials = _per_pair(log, theta[log.rank])
    low, high = wilson(alpha * trials, trials)
    scale = _value_per_click(log)
    return Estimates(
        impressions=impressions,
        clicks=clicks,
        expected_clicks=expected,
        estimate=alpha * scale,
        ci_low=low * scale,
        ci_high=high * scale,
    )


def sdbn(log: Impressions, *, max_rank: int = 20) -> Estimates:
    """Return attractiveness * satisfaction under the simplified dynamic Bayesian network.

    A user reads down to the last click of the session (everything when nothing was clicked);
    attractiveness = clicks / examinations, satisfaction = last clicks / clicks. The interval
    multiplies the two Wilson intervals' bounds.
    """
    impressions, clicks, expected = _base(log, max_rank)
    c = log.clicked
    n_sessions = int(log.session.max()) + 1 if log.session.size else 0
    last = np.zeros(n_sessions, dtype=np.int64)
    np.maximum.at(last, log.session, np.where(c > 0, log.rank, 0))
    session_last = last[log.session]
    examined = ((session_last == 0) | (log.rank <= session_last)).astype(np.float64)
    is_last = ((c > 0) & (log.rank == session_last)).astype(np.float64)
    seen = _per_pair(log, examined)
    clicked = _per_pair(log, c * examined)
    last_clicks = _per_pair(log, is_last)
    attract = np.divide(clicked, seen, out=np.zeros(log.n_pairs), where=seen > 0)
    satisfy = np.divide(last_clicks, clicked, out=np.zeros(log.n_pairs), where=clicked > 0)
    a_low, a_high = wilson(clicked, seen)
    s_low, s_high = wilson(last_clicks, clicked)
    scale = _value_per_click(log)
    return Estimates(
        impressions=impressions,
        clicks=clicks,
        expected_clicks=expected,
        estimate=attract * satisfy * scale,
        ci_low=a_low * s_low * scale,
        ci_high=a_high * s_high * scale,
    )
