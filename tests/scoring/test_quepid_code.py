"""Relevo's built-ins written for Quepid (the code a case export asks the user to create in
Quepid) give the built-in's own numbers when run in Quepid's environment (issue 36 item 2)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from app.scoring import Outcome, QueryInput, score_queries
from app.scoring.quepid_code import builtin_code
from tests.scoring.helpers import CLASSIC_SCALE, GRADED, config, query

BINARY = (0, 1)
NEGATIVE = (-1, 0, 1, 2, 3, 4)

CONFIGS: list[tuple[str, dict[str, Any], Sequence[float]]] = [
    ("ndcg", {}, GRADED),
    ("ndcg", {"gain": "exponential"}, GRADED),
    ("ndcg", {"ideal": "results"}, GRADED),
    ("ndcg", {"ideal": "max"}, GRADED),
    ("ndcg", {"unrated": "skip"}, GRADED),
    ("ndcg", {"gain": "exponential", "unrated": "skip", "ideal": "results", "k": 5}, GRADED),
    ("ndcg", {}, NEGATIVE),
    ("dcg", {}, GRADED),
    ("dcg", {"gain": "linear", "k": 3}, NEGATIVE),
    ("cg", {}, GRADED),
    ("cg", {}, NEGATIVE),
    ("precision", {}, BINARY),
    ("precision", {"threshold": 2, "k": 5}, GRADED),
    ("average_precision", {}, BINARY),
    ("average_precision", {}, NEGATIVE),
    ("reciprocal_rank", {}, GRADED),
    ("err", {}, GRADED),
    ("err", {}, NEGATIVE),
    ("classic", {}, CLASSIC_SCALE),
    ("classic", {"k": 4}, NEGATIVE),
]


def _queries(scale: Sequence[float], seed: int) -> list[QueryInput]:
    """Whole-number ratings (Quepid's), unrated and unreturned docs, empty results and none."""
    rng = random.Random(seed)
    out = [query([], {"a": scale[-1]}), query(["a", "b"], {}), query(["a"], {"z": scale[0]})]
    for _ in range(150):
        pool = [f"d{n}" for n in range(rng.randint(1, 25))]
        docs = rng.sample(pool, rng.randint(0, len(pool)))
        rated = rng.sample(pool, rng.randint(1, len(pool)))
        out.append(query(docs, {doc: rng.choice(scale) for doc in rated}))
    return out


@pytest.mark.parametrize(("kind", "params", "scale"), CONFIGS)
def test_the_code_for_quepid_gives_the_builtins_numbers(
    kind: str, params: dict[str, Any], scale: Sequence[float]
) -> None:
    queries = _queries(scale, seed=len(CONFIGS) * 7 + CONFIGS.index((kind, params, scale)))
    builtin = score_queries(config(kind, params, scale), queries)
    code = builtin_code(kind, params, [float(v) for v in scale])
    js = config("javascript", code=code, scale=scale, max_score=100, environment="quepid")
    in_quepid = score_queries(js, queries)
    for q, ours, theirs in zip(queries, builtin, in_quepid, strict=True):
        assert theirs.status != "error", theirs.reason
        assert _as_quepid_shows(ours, q) == pytest.approx(_shown(theirs), abs=1e-9), (q, ours)


def _shown(outcome: Outcome) -> float | None:
    return outcome.score if outcome.status == "scored" else None


def _as_quepid_shows(outcome: Outcome, q: QueryInput) -> float | None:
    """Relevo's outcome as Quepid can show it: no score only without results or ratings."""
    if outcome.status == "scored":
        return outcome.score
    return None if not q.docs or not q.ratings else 0.0


def test_data_x_in_quepid() -> None:
    """SCORING.md's data X: the preset NDCG@10's 61.4671, Classic's 77 on data Y."""
    x = query(list("abcde"), {"a": 2, "c": 3, "d": 0, "e": 1, "x": 3})
    js = config("javascript", code=builtin_code("ndcg", {}, [0, 1, 2, 3]), environment="quepid")
    assert score_queries(js, [x])[0].score == pytest.approx(61.4671, abs=5e-5)
    y = query(list("abcde"), {"a": 8, "c": 10, "d": 6, "x": 9})
    code = builtin_code("classic", {}, [float(v) for v in CLASSIC_SCALE])
    classic = config("javascript", code=code, scale=CLASSIC_SCALE, environment="quepid")
    assert score_queries(classic, [y])[0].score == 77
