"""Jaccard and extrapolated RBO against a transcription of the paper's equation 32."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from app.scoring.overlap import jaccard, rbo_ext

P = Fraction(9, 10)


def reference_rbo(first: list[str], second: list[str], p: Fraction = P) -> Fraction:
    """Equation 32 of Webber, Moffat and Zobel (2010) term by term, in exact fractions."""
    short, long = (first, second) if len(first) <= len(second) else (second, first)
    s, big = len(short), len(long)

    def x(d: int) -> int:
        return len(set(short[: min(d, s)]) & set(long[:d]))

    first_sum = sum((Fraction(x(d), d) * p**d for d in range(1, big + 1)), Fraction(0))
    second_sum = sum(
        (Fraction(x(s) * (d - s), s * d) * p**d for d in range(s + 1, big + 1)), Fraction(0)
    )
    tail = (Fraction(x(big) - x(s), big) + Fraction(x(s), s)) * p**big
    return (1 - p) / p * (first_sum + second_sum) + tail


def _random_list(rng: random.Random, length: int, universe: int) -> list[str]:
    return rng.sample([f"d{i}" for i in range(universe)], length)


@pytest.mark.parametrize("seed", range(300))
def test_rbo_matches_reference_on_random_lists(seed: int) -> None:
    rng = random.Random(seed)
    a = _random_list(rng, rng.randint(1, 25), rng.randint(25, 40))
    b = _random_list(rng, rng.randint(1, 25), rng.randint(25, 40))
    assert rbo_ext(a, b) == pytest.approx(float(reference_rbo(a, b)), abs=1e-12)
    assert rbo_ext(b, a) == pytest.approx(rbo_ext(a, b), abs=1e-12)


def test_rbo_unequal_lengths_worked_value() -> None:
    # S = a b c, L = a x b y: X1..X4 = 1, 1, 2, 2 (X_s = 2), so eq. 32 gives exactly
    # 0.1/0.9 * (0.9 + 0.5*0.81 + 2/3*0.729 + 0.5*0.6561 + 2*1/12*0.6561) + (0/4 + 2/3)*0.6561.
    expected = 0.1 / 0.9 * (0.9 + 0.405 + 0.486 + 0.32805 + 0.6561 / 6) + 2 / 3 * 0.6561
    assert rbo_ext(["a", "b", "c"], ["a", "x", "b", "y"]) == pytest.approx(expected, abs=1e-12)


def test_rbo_properties_from_the_paper() -> None:
    ranking = [f"d{i}" for i in range(10)]
    assert rbo_ext(ranking, ranking) == pytest.approx(1.0)
    assert rbo_ext(ranking, [f"x{i}" for i in range(10)]) == 0.0
    # Extrapolation assumes the agreement seen goes on: a prefix of a list agrees fully.
    assert rbo_ext(ranking[:4], ranking) == pytest.approx(1.0)
    # Top-weighted: a swap at the top costs more than the same swap at the bottom.
    top_swap = [ranking[1], ranking[0], *ranking[2:]]
    bottom_swap = [*ranking[:8], ranking[9], ranking[8]]
    assert rbo_ext(ranking, top_swap) < rbo_ext(ranking, bottom_swap) < 1.0
    rng = random.Random(7)
    for _ in range(100):
        a = _random_list(rng, rng.randint(1, 15), 20)
        b = _random_list(rng, rng.randint(1, 15), 20)
        assert 0.0 <= rbo_ext(a, b) <= 1.0 + 1e-12


def test_rbo_of_empty_lists_and_bad_p() -> None:
    assert rbo_ext([], []) == 1.0
    assert rbo_ext([], ["a"]) == 0.0
    with pytest.raises(ValueError, match="p must be"):
        rbo_ext(["a"], ["a"], p=1.0)


def test_jaccard() -> None:
    assert jaccard([], []) == 1.0
    assert jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert jaccard(["a"], ["b"]) == 0.0
    assert jaccard(["a", "b"], ["b", "a"]) == 1.0
