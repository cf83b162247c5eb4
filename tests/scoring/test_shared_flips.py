"""The randomization tests of several metrics, drawn from one seeded matrix of sign flips."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from app.metrics import holm
from app.scoring.significance import FLIPS, randomization_p, randomization_ps


def exact_p(deltas: list[float]) -> float:
    """Every one of the 2^n sign flips: the share whose |sum| reaches the observed one."""
    observed = abs(sum(deltas))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(deltas))
        if abs(sum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed - 1e-9
    )
    return float(hits / 2 ** len(deltas))


# Two metrics over the same eight queries (the second unchanged on two of them).
NDCG = [4.0, -1.5, 3.0, 2.5, 0.5, 6.0, -2.0, 1.0]
PRECISION = [10.0, 0.0, 10.0, -10.0, 0.0, 20.0, 10.0, 10.0]


def test_each_metric_p_is_the_exact_enumeration_within_monte_carlo_error() -> None:
    found = randomization_ps(np.column_stack([NDCG, PRECISION]), flips=FLIPS, seed=[1, 2, 3])
    for p, deltas in zip(found, (NDCG, PRECISION), strict=True):
        exact = exact_p(deltas)
        error = math.sqrt(exact * (1 - exact) / FLIPS)
        assert abs(p - exact) <= 4 * error + 1 / FLIPS, (p, exact)
    # The two exact p-values differ: each column was judged on its own deltas.
    assert exact_p(NDCG) == 36 / 256
    assert exact_p(PRECISION) == 48 / 256


def test_the_same_seed_gives_the_same_p_and_another_seed_draws_other_flips() -> None:
    deltas = np.column_stack([NDCG, PRECISION])
    first = randomization_ps(deltas, flips=2_000, seed=[20_100, 4, 7])
    assert randomization_ps(deltas, flips=2_000, seed=[20_100, 4, 7]) == first
    assert randomization_ps(deltas, flips=2_000, seed=[20_100, 7, 4]) != first


def test_queries_unchanged_in_every_metric_change_nothing() -> None:
    # A flip of a zero delta changes no sum: p is the test of the changed queries alone.
    deltas = np.column_stack([NDCG + [0.0] * 5, PRECISION + [0.0] * 5])
    padded = randomization_ps(deltas, flips=FLIPS, seed=9)
    alone = randomization_ps(np.column_stack([NDCG, PRECISION]), flips=FLIPS, seed=9)
    assert padded == alone


def test_one_metric_is_the_shared_test_of_one_column() -> None:
    assert (
        randomization_p(NDCG, flips=500, seed=5)
        == randomization_ps(np.asarray(NDCG)[:, None], flips=500, seed=5)[0]
    )
    # Nothing changed: every flip reaches the observed 0.
    assert randomization_ps(np.zeros((6, 2)), flips=100, seed=1) == [1.0, 1.0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.floats(min_value=0, max_value=1, allow_nan=False)),
        max_size=12,
    )
)
def test_holm_is_statsmodels_holm(p_values: list[float | None]) -> None:
    found = holm(p_values)
    present = [p for p in p_values if p is not None]
    expected = list(multipletests(present, method="holm")[1]) if present else []
    assert [p for p in found if p is not None] == pytest.approx(expected, abs=1e-15)
    assert [p is None for p in found] == [p is None for p in p_values]
