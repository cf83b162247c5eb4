"""Property tests of the built-in metrics, and a cross-check against ranx."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.scoring import QueryInput, ScoreDoc, score_queries, score_query
from app.scoring.ranking import best_order, levenshtein
from tests.scoring.helpers import CLASSIC_SCALE, GRADED, config, query

IDS = [f"d{i}" for i in range(15)]
KINDS = ["classic", "ndcg", "dcg", "cg", "precision", "average_precision", "reciprocal_rank", "err"]

ratings_st = st.dictionaries(st.sampled_from(IDS), st.sampled_from(GRADED), max_size=15)
ranking_st = st.lists(st.sampled_from(IDS), unique=True, max_size=12)
ndcg_params_st = st.fixed_dictionaries(
    {
        "k": st.integers(1, 12),
        "gain": st.sampled_from(["linear", "exponential"]),
        "ideal": st.sampled_from(["rated", "results", "max"]),
        "unrated": st.sampled_from(["zero", "skip"]),
    }
)


def reference_levenshtein(a: list[object], b: list[object]) -> int:
    """Textbook dynamic programme, the oracle for the bit-parallel version."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        rows[i][0] = i
    for j in range(len(b) + 1):
        rows[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
    return rows[-1][-1]


@given(
    st.lists(st.sampled_from([None, 0, 1, 2, 3]), max_size=70),
    st.lists(st.sampled_from([None, 0, 1, 2, 3]), max_size=70),
)
def test_levenshtein_matches_the_textbook(a: list[object], b: list[object]) -> None:
    assert levenshtein(a, b) == reference_levenshtein(a, b)


@given(st.sampled_from(KINDS), ranking_st, ratings_st, st.integers(1, 12))
def test_every_score_is_within_0_and_100(
    kind: str, ranking: list[str], ratings: dict[str, float], k: int
) -> None:
    scale = CLASSIC_SCALE if kind == "classic" else GRADED
    if kind == "classic":
        ratings = {doc: r + 1 for doc, r in ratings.items()}
    outcome = score_query(config(kind, {"k": k}, scale=scale), query(ranking, ratings))
    assert outcome.status in ("scored", "unscored")
    if outcome.status == "scored":
        assert outcome.score is not None
        assert 0 <= outcome.score <= 100
    else:
        assert outcome.score is None and outcome.reason


@given(ratings_st, ndcg_params_st)
def test_ndcg_of_the_ideal_ordering_is_100(
    ratings: dict[str, float], params: dict[str, object]
) -> None:
    ranking = [doc for doc, _ in best_order(ratings)]
    params = {**params, "ideal": "rated" if params["ideal"] == "max" else params["ideal"]}
    outcome = score_query(config("ndcg", params), query(ranking, ratings))
    if any(r > 0 for r in ratings.values()):
        assert outcome.score == pytest.approx(100, abs=1e-9)
    else:
        assert outcome.status == "unscored"


@given(ranking_st, ratings_st, ndcg_params_st, st.data())
def test_unrated_docs_change_nothing_when_skipped(
    ranking: list[str], ratings: dict[str, float], params: dict[str, object], data: st.DataObject
) -> None:
    params = {**params, "unrated": "skip"}
    rated = [doc for doc in ranking if doc in ratings]
    mixed = list(rated)
    for extra in data.draw(st.lists(st.integers(0, 50), max_size=5)):
        mixed.insert(extra % (len(mixed) + 1), f"unrated{len(mixed)}")
    before = score_query(config("ndcg", params), query(rated, ratings))
    after = score_query(config("ndcg", params), query(mixed, ratings))
    if rated:  # with no rated doc returned, "zero results" and "no results kept" differ
        assert after.status == before.status
        assert after.score == pytest.approx(before.score, abs=1e-9)


@given(st.dictionaries(st.sampled_from(IDS), st.integers(1, 10), min_size=1), st.integers(1, 12))
def test_classic_equals_avg_rating100_for_best_first(ratings: dict[str, float], k: int) -> None:
    ranking = [doc for doc, _ in best_order(ratings)]
    outcome = score_query(config("classic", {"k": k}, scale=CLASSIC_SCALE), query(ranking, ratings))
    top = [r for _, r in best_order(ratings)[:k]]
    assert outcome.score == math.floor(sum(top) / len(top) * 100 / 10)


# A minute of CPU: `make test` (and so CI) runs it, `make test-fast` leaves it out.
@pytest.mark.slow
def test_ndcg_agrees_with_ranx() -> None:
    from ranx import Qrels, Run, evaluate

    rng = random.Random(11)
    queries: list[QueryInput] = []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for number in range(3000):
        docs = rng.sample(IDS, rng.randint(1, 12))
        ratings = {doc: rng.choice(GRADED) for doc in rng.sample(IDS, rng.randint(1, 15))}
        if not any(ratings.values()):
            ratings[docs[0]] = 3
        queries.append(QueryInput(docs=[ScoreDoc(d) for d in docs], ratings=ratings))
        qid = f"q{number:05d}"  # ranx orders queries by id
        qrels[qid] = {doc: int(r) for doc, r in ratings.items()}
        run[qid] = {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)}
    for k in (5, 10):
        expected = evaluate(Qrels(qrels), Run(run), f"ndcg@{k}", return_mean=False)
        ours = score_queries(config("ndcg", {"k": k}), queries)
        assert [o.raw_score for o in ours] == pytest.approx(list(expected), abs=1e-9)
