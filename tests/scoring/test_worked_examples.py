"""SCORING.md's worked examples, pinned to 4 decimals."""

from __future__ import annotations

from typing import Any

import pytest

from app.scoring import QueryInput, score_query
from app.scoring.ranking import best_order, distance_from_best
from tests.scoring.helpers import CLASSIC_SCALE, config

EXAMPLES_X: list[tuple[str, dict[str, Any], float]] = [
    ("ndcg", {}, 61.4671),
    ("ndcg", {"gain": "exponential"}, 51.5978),
    ("ndcg", {"ideal": "results"}, 81.6247),
    ("ndcg", {"ideal": "max"}, 28.5155),
    ("ndcg", {"unrated": "skip"}, 68.3718),
    ("ndcg", {"gain": "exponential", "unrated": "skip", "ideal": "results"}, 83.5448),
    ("precision", {}, 60),
    ("average_precision", {}, 56.6667),
    ("reciprocal_rank", {}, 100),
    ("cg", {}, 20),
    ("dcg", {}, 21.6534),
    ("err", {}, 55.9245),
]


@pytest.mark.parametrize(("kind", "params", "expected"), EXAMPLES_X)
def test_data_x(data_x: QueryInput, kind: str, params: dict[str, Any], expected: float) -> None:
    outcome = score_query(config(kind, params), data_x)
    assert outcome.status == "scored"
    assert outcome.score == pytest.approx(expected, abs=5e-5)


def test_raw_scores_are_the_metrics_own_values(data_x: QueryInput) -> None:
    assert score_query(config("cg"), data_x).raw_score == 6
    assert score_query(config("dcg"), data_x).raw_score == pytest.approx(6.886853, abs=1e-6)
    assert score_query(config("ndcg"), data_x).raw_score == pytest.approx(0.614671, abs=1e-6)


def test_data_y_classic(data_y: QueryInput) -> None:
    outcome = score_query(config("classic", scale=CLASSIC_SCALE), data_y)
    assert (outcome.status, outcome.score, outcome.raw_score) == ("scored", 77, 77)


def test_data_y_classic_parts(data_y: QueryInput) -> None:
    best = best_order(data_y.ratings)
    assert [r for _, r in best] == [10, 9, 8, 6]
    top = [data_y.ratings.get(d.id) for d in data_y.docs]
    assert top == [8, None, 10, 6, None]
    assert distance_from_best(top, best, 10) == 3
