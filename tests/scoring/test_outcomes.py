"""Outcome rules of SCORING.md, the case score and the presets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.models import RunQuery
from app.scoring import (
    PRESETS,
    Outcome,
    QueryInput,
    Tally,
    case_score,
    score_queries,
    score_query,
    tally,
)
from app.scoring.ranking import best_order, levenshtein
from app.vocabulary import QueryStatus
from tests.scoring.helpers import CLASSIC_SCALE, config, query

BUILTINS = ["classic", "ndcg", "dcg", "cg", "precision", "average_precision",
            "reciprocal_rank", "err"]  # fmt: skip


@pytest.mark.parametrize("kind", BUILTINS)
def test_no_ratings_is_unscored(kind: str) -> None:
    outcome = score_query(config(kind, scale=CLASSIC_SCALE), query("abc", {}))
    assert (outcome.status, outcome.score, outcome.reason) == ("unscored", None, "no ratings")


def test_classic_without_rated_docs_in_top_k() -> None:
    classic = config("classic", {"k": 2}, scale=CLASSIC_SCALE)
    outcome = score_query(classic, query("abc", {"c": 5}))
    assert (outcome.status, outcome.reason) == ("unscored", "no rated documents in the top k")
    zero = score_query(classic, query("", {"c": 5}))
    assert zero.reason == "no rated documents in the top k"


def test_classic_mean_of_zero_scores_zero() -> None:
    outcome = score_query(config("classic", scale=(0, 1, 2, 3)), query("ab", {"a": 0, "b": 0}))
    assert (outcome.status, outcome.score) == ("scored", 0)


def test_classic_never_below_zero() -> None:
    ratings = {"a": 1, "b": 1, "x": 10, "y": 10, "z": 10}
    outcome = score_query(config("classic", scale=CLASSIC_SCALE), query("ab", ratings))
    assert outcome.score == 7  # avgRating100 10, B = [10, 10, 10, 1, 1], distance 3
    ratings = {"a": 1, **{f"x{i}": 10 for i in range(20)}}
    docs = ["a"] + [f"u{i}" for i in range(19)]
    deep = config("classic", {"k": 20}, scale=CLASSIC_SCALE)
    assert score_query(deep, query(docs, ratings)).score == 0  # 10 - 20 clamps to 0


def test_ndcg_no_relevant_ratings() -> None:
    outcome = score_query(config("ndcg"), query("ab", {"a": 0, "b": 0}))
    assert (outcome.status, outcome.reason) == ("unscored", "no relevant ratings")


def test_ndcg_zero_results_with_ratings_scores_zero() -> None:
    for ideal in ("rated", "results", "max"):
        outcome = score_query(config("ndcg", {"ideal": ideal}), query("", {"a": 3}))
        assert (outcome.status, outcome.score) == ("scored", 0)


@pytest.mark.parametrize("kind", ["dcg", "cg", "precision", "reciprocal_rank", "err"])
def test_zero_results_with_ratings_score_zero(kind: str) -> None:
    assert score_query(config(kind), query("", {"a": 3})).score == 0


def test_average_precision_without_relevant_ratings() -> None:
    outcome = score_query(config("average_precision", scale=(0, 1)), query("ab", {"a": 0}))
    assert (outcome.status, outcome.reason) == ("unscored", "no relevant ratings")
    assert score_query(config("average_precision"), query("", {"a": 3})).score == 0


def test_threshold_defaults_to_smallest_positive_scale_value() -> None:
    assert config("precision", scale=(0, 2, 5)).params["threshold"] == 2
    p = config("precision", {"threshold": 3})
    assert score_query(p, query("abcd", {"a": 3, "b": 2, "c": 3})).score == 50


def test_default_gains() -> None:
    assert config("dcg").params["gain"] == "exponential"
    assert config("ndcg").params == {"k": 10, "gain": "linear", "ideal": "rated", "unrated": "zero"}


def test_k_limits_the_depth() -> None:
    p = config("precision", {"k": 2})
    assert score_query(p, query("abcd", {"c": 3, "d": 3})).score == 0
    rr = config("reciprocal_rank", {"k": 2})
    assert score_query(rr, query("abc", {"c": 3})).score == 0
    assert score_query(config("reciprocal_rank"), query("abc", {"c": 3})).score == pytest.approx(
        100 / 3
    )


def test_best_order_ties_by_doc_id() -> None:
    assert best_order({"b": 2, "a": 2, "c": 3, "d": 0}) == [
        ("c", 3), ("a", 2), ("b", 2), ("d", 0)
    ]  # fmt: skip


def test_levenshtein_with_nulls() -> None:
    assert levenshtein([None, None], [None, None]) == 0
    assert levenshtein([1, None], [None, 1]) == 2
    assert levenshtein([], [1, 2]) == 2
    assert levenshtein([1, 2, 3], [1.0, 2.0, 3.0]) == 0
    assert levenshtein([0], [None]) == 1
    assert levenshtein(list("kitten"), list("sitting")) == 3


def test_bad_rating_data_is_an_error_not_an_exception() -> None:
    outcomes = score_queries(
        config("ndcg"),
        [query("ab", {"a": float("nan")}), query("ab", {"a": "x"}), query("ab", {"a": 3})],  # type: ignore[dict-item]
    )
    assert [o.status for o in outcomes] == ["error", "error", "scored"]
    assert outcomes[0].reason == "the rating of doc 'a' is not a finite number"
    assert outcomes[1].reason == "the rating of doc 'a' is not a number"


def test_queries_from_a_generator_score_like_a_list_with_a_bad_one_inside() -> None:
    """Built-ins score a generator's inputs as they come; a bad one mid-way stays alone."""
    inputs = [
        query("ab", {"a": 3}),
        query("ab", {"a": 1, "b": 3}),
        query("ab", {"a": "x"}),  # type: ignore[dict-item]
        query("ba", {"a": 1, "b": 3}),
        query("ab", {}),
    ]
    from_list = score_queries(config("ndcg"), inputs)
    from_generator = score_queries(config("ndcg"), (q for q in inputs))
    assert from_generator == from_list
    assert [o.status for o in from_list] == ["scored", "scored", "error", "scored", "unscored"]
    # (1 + 3/log2(3)) / (3 + 1/log2(3)) for the second query.
    assert [round(o.score, 4) for o in from_list if o.score is not None] == [100.0, 79.6708, 100.0]


def test_a_failing_input_generator_is_not_taken_for_bad_query_data() -> None:
    def inputs() -> Iterator[QueryInput]:
        yield query("ab", {"a": 3})
        raise LookupError("the store went away")

    with pytest.raises(LookupError, match="the store went away"):
        score_queries(config("ndcg"), inputs())


def test_case_score_is_the_mean_of_scored() -> None:
    outcomes = [
        Outcome(QueryStatus.SCORED, 50.0, 0.5, None),
        Outcome(QueryStatus.UNSCORED, None, None, "no ratings"),
        Outcome(QueryStatus.SCORED, 100.0, 1.0, None),
        Outcome(QueryStatus.ERROR, None, None, "boom"),
    ]
    assert case_score(outcomes) == 75.0
    assert case_score(outcomes[1:2]) is None
    assert case_score([]) is None
    assert tally(outcomes) == Tally(case_score=75.0, scored=2, unscored=1, errors=1)
    stored = [RunQuery(status=o.status, score=o.score) for o in outcomes]
    assert tally(stored) == tally(outcomes)
    assert tally([]) == Tally(case_score=None, scored=0, unscored=0, errors=0)


def test_presets_match_the_table() -> None:
    by_name = {p.name: p for p in PRESETS}
    assert list(by_name) == ["Classic", "NDCG@10", "DCG@10", "CG@10", "P@10", "AP@10",
                             "RR@10", "ERR@10"]  # fmt: skip
    assert by_name["Classic"].scale == tuple(range(1, 11))
    assert by_name["NDCG@10"].scale_labels == {"0": "Poor", "1": "Fair", "2": "Good",
                                               "3": "Perfect"}  # fmt: skip
    assert by_name["P@10"].scale_labels == {"0": "Irrelevant", "1": "Relevant"}
    assert by_name["DCG@10"].params["gain"] == "exponential"
    for preset in PRESETS:
        built = config(preset.kind, preset.params, preset.scale, scale_labels=preset.scale_labels)
        assert dict(built.params) == dict(preset.params)


def _edit_distance_table(a: list[int | None], b: list[int | None]) -> int:
    # The textbook dynamic programme, as the reference for the bit-parallel version.
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


_RATING_LISTS = st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=12)


@given(_RATING_LISTS, _RATING_LISTS)
def test_levenshtein_matches_the_table(a: list[int | None], b: list[int | None]) -> None:
    assert levenshtein(a, b) == _edit_distance_table(a, b)


def test_levenshtein_trims_common_ends_only_where_they_match() -> None:
    # Same first and last entries, one substitution in the middle.
    assert levenshtein([3, 2, 1, None], [3, 1, 1, None]) == 1
    # A shared prefix that is also a rotation: trimming must not hide the two edits.
    assert levenshtein([3, 3, 2, 1], [3, 2, 1, 3]) == 2
    assert levenshtein([1, 2, 3], [1, 2, 3]) == 0
