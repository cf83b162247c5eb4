"""The dynamic Bayesian network click model (DBN), fitted by EM over numpy.

A user examines rank 1; at each examined rank they click when attracted (a, per pair), and
after a click are satisfied (s, per pair) and stop; otherwise they go on to the next rank
with probability gamma. The E step is a forward-backward pass over the ranks of every
session at once (a sessions x ranks matrix): the loop is over ranks, never over events.
"""

from __future__ import annotations

import numpy as np

from app.clicks.click_models import Estimates, Impressions, ctr_by_rank, wilson

__all__ = ["dbn"]

Matrix = np.ndarray


def _grid(log: Impressions, max_rank: int) -> tuple[Matrix, Matrix, Matrix]:
    """Return (pair, shown, clicked) as sessions x ranks matrices (pair -1 where none)."""
    sessions = int(log.session.max()) + 1 if log.session.size else 0
    pair = np.full((sessions, max_rank), -1, dtype=np.int64)
    clicked = np.zeros((sessions, max_rank))
    pair[log.session, log.rank - 1] = log.pair
    clicked[log.session, log.rank - 1] = log.clicked
    return pair, pair >= 0, clicked


def _posteriors(
    a: Matrix, s: Matrix, shown: Matrix, c: Matrix, gamma: float
) -> tuple[Matrix, Matrix]:
    """Return P(examined | clicks) and P(satisfied | clicks) at every cell (E step)."""
    sessions, ranks = c.shape
    # A rank with no doc shown changes nothing: emission 1, the user goes on.
    em1 = np.where(shown, np.where(c > 0, a, 1 - a), 1.0)
    em0 = np.where(c > 0, 0.0, 1.0)
    go = np.where(shown, np.where(c > 0, gamma * (1 - s), gamma), 1.0)
    f = np.zeros((sessions, ranks + 1))
    g = np.zeros((sessions, ranks + 1))
    f[:, 0] = 1.0
    for i in range(ranks):
        f[:, i + 1] = f[:, i] * em1[:, i] * go[:, i]
        g[:, i + 1] = f[:, i] * em1[:, i] * (1 - go[:, i]) + g[:, i] * em0[:, i]
    b1 = np.ones((sessions, ranks + 1))
    b0 = np.ones((sessions, ranks + 1))
    for i in range(ranks - 1, -1, -1):
        b1[:, i] = em1[:, i] * (go[:, i] * b1[:, i + 1] + (1 - go[:, i]) * b0[:, i + 1])
        b0[:, i] = em0[:, i] * b0[:, i + 1]
    z = np.maximum(f[:, :1] * b1[:, :1], 1e-300)
    examined = f[:, :ranks] * b1[:, :ranks] / z
    # After a click: satisfied (then surely stops) against not (then goes on with gamma).
    stop = s * b0[:, 1:]
    rest = (1 - s) * ((1 - gamma) * b0[:, 1:] + gamma * b1[:, 1:])
    satisfied = np.where(c > 0, stop / np.maximum(stop + rest, 1e-300), 0.0)
    return examined, satisfied


def dbn(
    log: Impressions, *, max_rank: int = 20, gamma: float = 0.9, iterations: int = 50
) -> Estimates:
    """Return each pair's attractiveness * satisfaction under the DBN, fitted by EM."""
    pair, shown, c = _grid(log, max_rank)
    index = np.where(shown, pair, 0)
    n = log.n_pairs
    impressions = np.bincount(log.pair, minlength=n).astype(np.int64)
    clicks = np.bincount(log.pair, weights=log.clicked, minlength=n).astype(np.float64)
    attract, satisfy = np.full(n, 0.5), np.full(n, 0.5)
    for _ in range(iterations):
        examined, satisfied = _posteriors(attract[index], satisfy[index], shown, c, gamma)
        drawn = np.where(shown, c + (1 - c) * (1 - examined) * attract[index], 0.0)
        attract = np.bincount(index[shown], weights=drawn[shown], minlength=n) / np.maximum(
            impressions, 1
        )
        kept = np.bincount(index[shown], weights=satisfied[shown], minlength=n)
        satisfy = np.divide(kept, clicks, out=np.zeros(n), where=clicks > 0)
    ctr = ctr_by_rank(log, max_rank)
    expected = np.bincount(log.pair, weights=ctr[log.rank], minlength=n).astype(np.float64)
    value = np.bincount(log.pair, weights=log.value, minlength=n).astype(np.float64)
    scale = np.divide(value, clicks, out=np.ones(n), where=clicks > 0)
    a_low, a_high = wilson(attract * impressions, impressions.astype(np.float64))
    s_low, s_high = wilson(satisfy * clicks, clicks)
    return Estimates(
        impressions=impressions,
        clicks=clicks.round().astype(np.int64),
        expected_clicks=expected,
        estimate=attract * satisfy * scale,
        ci_low=a_low * s_low * scale,
        ci_high=a_high * s_high * scale,
    )
