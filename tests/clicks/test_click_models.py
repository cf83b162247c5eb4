"""Click models: worked examples computed by hand, and the truth recovered from simulations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from app.clicks.click_models import Impressions, coec, ctr_by_rank, pbm, sdbn
from app.clicks.dbn import dbn
from tests.support.click_sim import make_world, simulate


def _log(rows: list[tuple[int, int, int, float]], n_pairs: int) -> Impressions:
    session, pair, rank, value = (np.array(column) for column in zip(*rows, strict=True))
    return Impressions(
        session=session.astype(np.int64),
        pair=pair.astype(np.int64),
        rank=rank.astype(np.int64),
        value=value.astype(np.float64),
        n_pairs=n_pairs,
    )


# (session, pair, rank, value): rank 1 is shown 3 times with 1 click (CTR 1/3), rank 2 is
# shown 4 times with 1 click (CTR 1/4).
COEC_ROWS = [
    (0, 0, 1, 1.0),
    (1, 0, 1, 0.0),
    (2, 1, 2, 1.0),
    (3, 1, 2, 0.0),
    (4, 1, 1, 0.0),
    (5, 0, 2, 0.0),
    (6, 2, 2, 0.0),
]


def test_coec_worked_example() -> None:
    log = _log(COEC_ROWS, 3)
    assert ctr_by_rank(log, 2)[1:] == pytest.approx([1 / 3, 1 / 4])
    result = coec(log, max_rank=2)
    # Pair 0: 1 click / (1/3 + 1/3 + 1/4); pair 1: 1 / (1/4 + 1/4 + 1/3); pair 2: 0 / (1/4).
    assert result.impressions.tolist() == [3, 3, 1]
    assert result.clicks.tolist() == [1, 1, 0]
    assert np.round(result.expected_clicks, 4).tolist() == [0.9167, 0.8333, 0.25]
    assert np.round(result.estimate, 4).tolist() == [1.0909, 1.2, 0.0]
    # Garwood's interval of one click is (0.0253, 5.5716), divided by the expected clicks.
    assert round(float(result.ci_low[0]), 4) == round(0.025318 / (11 / 12), 4)
    assert round(float(result.ci_high[1]), 4) == round(5.571643 / (5 / 6), 4)
    assert result.ci_low[2] == 0.0


def test_coec_action_weights_scale_the_clicks() -> None:
    rows = [(s, p, r, 3.0 if v else 0.0) if p == 0 else (s, p, r, v) for s, p, r, v in COEC_ROWS]
    # Pair 0's click was a purchase (weight 3): 3 / 0.9167; the CTR by rank is unchanged.
    assert round(float(coec(_log(rows, 3), max_rank=2).estimate[0]), 4) == 3.2727


def test_pbm_one_em_step_by_hand() -> None:
    # a = θ = 0.5 at the start. An unclicked impression: P(relevant) = a(1-θ)/(1-aθ) = 1/3,
    # P(examined) = θ(1-a)/(1-aθ) = 1/3. Pair 0: (1 + 1/3)/2 = 2/3; pair 1: (1/3 + 1/3)/2.
    log = _log([(0, 0, 1, 1.0), (1, 0, 2, 0.0), (2, 1, 1, 0.0), (3, 1, 2, 0.0)], 2)
    result = pbm(log, max_rank=2, iterations=1, init=0.5)
    assert np.round(result.estimate, 4).tolist() == [0.6667, 0.3333]
    assert result.clicks.tolist() == [1, 0] and result.impressions.tolist() == [2, 2]
    assert (result.ci_low <= result.estimate).all() and (result.estimate <= result.ci_high).all()


def test_sdbn_worked_example() -> None:
    # Three sessions over docs A, B, C (pairs 0, 1, 2) at ranks 1, 2, 3:
    # S0 clicks B (reads A, B); S1 clicks A and C (reads all); S2 clicks nothing (reads all).
    rows = [
        (0, 0, 1, 0.0), (0, 1, 2, 1.0), (0, 2, 3, 0.0),
        (1, 0, 1, 1.0), (1, 1, 2, 0.0), (1, 2, 3, 1.0),
        (2, 0, 1, 0.0), (2, 1, 2, 0.0), (2, 2, 3, 0.0),
    ]  # fmt: skip
    result = sdbn(_log(rows, 3), max_rank=3)
    # A: attractiveness 1/3, never the last click (satisfaction 0); B: 1/3 * 1; C: 1/2 * 1.
    assert np.round(result.estimate, 4).tolist() == [0.0, 0.3333, 0.5]
    assert result.clicks.tolist() == [1, 1, 1]


def _orders_match(estimate: np.ndarray, truth: np.ndarray) -> None:
    queries, docs = truth.shape
    for q in range(queries):
        got = estimate[q * docs : (q + 1) * docs]
        assert np.argsort(-got).tolist() == np.argsort(-truth[q]).tolist(), (q, got, truth[q])


@pytest.mark.parametrize("seed", [1, 2])
def test_pbm_recovers_relevance_and_bias(seed: int) -> None:
    world = make_world(seed)
    log = simulate(world, sessions=60_000, seed=seed + 100, model="pbm")
    result = pbm(log, max_rank=6)
    _orders_match(result.estimate, world.attract)
    # Up to the model's one free scale, the attractiveness found is the true one.
    fitted = result.estimate.reshape(world.attract.shape)
    ratio = fitted / world.attract
    assert ratio.std() / ratio.mean() < 0.08


@pytest.mark.parametrize("seed", [3, 4])
def test_coec_recovers_the_order_under_pbm(seed: int) -> None:
    world = make_world(seed)
    result = coec(simulate(world, sessions=60_000, seed=seed, model="pbm"), max_rank=6)
    _orders_match(result.estimate, world.attract)


@pytest.mark.parametrize("seed", [5, 6])
def test_sdbn_recovers_attractiveness_times_satisfaction(seed: int) -> None:
    world = make_world(seed)
    result = sdbn(simulate(world, sessions=80_000, seed=seed, model="cascade"), max_rank=6)
    truth = world.attract * world.satisfy
    # Close relevances may swap on a finite sample: the order is all but the same.
    docs = truth.shape[1]
    for q in range(truth.shape[0]):
        rho = spearmanr(result.estimate[q * docs : (q + 1) * docs], truth[q]).statistic
        assert rho > 0.9, (q, rho)
    assert (result.ci_low <= result.estimate + 1e-12).all()
    assert (result.estimate <= result.ci_high + 1e-12).all()


def test_dbn_one_em_step_by_hand() -> None:
    # Docs A, B (pairs 0, 1) at ranks 1, 2; S0 clicks A, S1 clicks nothing; gamma 1, a = s = 0.5.
    # S0: P(B examined) = 1/3 (forward 1/4 x backward 1/2, over 3/8), P(A satisfied) = 2/3
    # (0.5 against 0.5 x 0.5); S1: both examined for sure. a(A) = (1 + 0)/2, a(B) = (1/3 x 0.5 +
    # 0)/2 = 1/6; s(A) = 2/3, s(B) = 0 (never clicked): A = 1/2 x 2/3, B = 0.
    log = _log([(0, 0, 1, 1.0), (0, 1, 2, 0.0), (1, 0, 1, 0.0), (1, 1, 2, 0.0)], 2)
    result = dbn(log, max_rank=2, gamma=1.0, iterations=1)
    assert np.round(result.estimate, 4).tolist() == [0.3333, 0.0]
    assert result.impressions.tolist() == [2, 2] and result.clicks.tolist() == [1, 0]


@pytest.mark.parametrize("seed", [5, 6])
def test_dbn_recovers_attractiveness_times_satisfaction(seed: int) -> None:
    world = make_world(seed)
    result = dbn(
        simulate(world, sessions=40_000, seed=seed, model="cascade"), max_rank=6, gamma=1.0
    )
    truth = world.attract * world.satisfy
    fitted = result.estimate.reshape(truth.shape)
    # The values themselves, not only their order: within 0.03 of the truth everywhere.
    assert np.abs(fitted - truth).max() < 0.03
    for q in range(truth.shape[0]):
        rho = spearmanr(fitted[q], truth[q]).statistic
        assert rho > 0.9, (q, rho)
