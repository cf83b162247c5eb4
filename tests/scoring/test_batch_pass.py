"""The array pass (app.scoring.batch, what every score goes through) against the per-query
reference definitions (app.scoring.metrics), query by query, to 1e-9."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.scoring import Outcome, QueryInput, ScoreDoc, ScorerConfig, arrays, kernels
from app.scoring.metrics import GRADED_KINDS, METRICS, without_negative_gain
from app.scoring.score import score_many, score_pass
from app.scoring.types import StoredDocs
from app.scoring.validation import normalize_params

IDS = [f"d{i}" for i in range(14)]
SCALES: list[tuple[float, ...]] = [
    (0, 1, 2, 3),
    (0, 1),
    tuple(range(1, 11)),
    (-1, 0, 1, 2, 3, 4),  # trec_eval's rel_level: negative grades read as 0 by graded kinds
    (0, 0.5, 1.5, 2.5),
]


def reference(config: ScorerConfig, query: QueryInput) -> Outcome:
    """Return the outcome of the per-query definition of SCORING.md."""
    params = normalize_params(config.kind, config.params, config.scale)
    metric = METRICS[config.kind](params, config.scale[-1])
    if config.scale[0] < 0 and config.kind in GRADED_KINDS:
        metric = without_negative_gain(metric)
    return metric(query)


def _params(draw: Any, kind: str, scale: tuple[float, ...]) -> dict[str, Any]:
    params: dict[str, Any] = {"k": draw(st.integers(1, 16))}
    if kind == "ndcg":
        params["gain"] = draw(st.sampled_from(["linear", "exponential"]))
        params["ideal"] = draw(st.sampled_from(["rated", "results", "max"]))
        params["unrated"] = draw(st.sampled_from(["zero", "skip"]))
    if kind == "dcg":
        params["gain"] = draw(st.sampled_from(["linear", "exponential"]))
    if kind in ("precision", "average_precision", "reciprocal_rank"):
        params["threshold"] = draw(st.sampled_from(scale))
    return params


@st.composite
def cases(draw: Any) -> tuple[list[ScorerConfig], list[QueryInput]]:
    scale = draw(st.sampled_from(SCALES))
    kinds = draw(st.lists(st.sampled_from(sorted(METRICS)), min_size=1, max_size=6))
    configs = [ScorerConfig(kind, scale, _params(draw, kind, scale)) for kind in kinds]
    grade = st.sampled_from(scale) | st.floats(min_value=scale[0], max_value=scale[-1])
    queries = []
    for _ in range(draw(st.integers(1, 8))):
        # Rated docs returned or not, unrated docs returned, empty results, no ratings.
        ratings = draw(st.dictionaries(st.sampled_from(IDS), grade, max_size=12))
        ranking = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=12))
        stored = draw(st.booleans())
        docs: Any = (
            StoredDocs([{"id": d, "fields": {}} for d in ranking]).as_sequence()
            if stored
            else [ScoreDoc(d) for d in ranking]
        )
        queries.append(QueryInput(docs=docs, ratings=ratings))
    return configs, queries


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=400, deadline=None)
@given(cases())
def test_the_array_pass_equals_the_reference_query_by_query(
    case: tuple[list[ScorerConfig], list[QueryInput]],
) -> None:
    configs, queries = case
    found = score_many(configs, queries)
    # The scores alone (what extra metrics keep) are the outcomes' scores.
    _none, values = score_pass([], configs, queries)
    assert values == [[o.score if o.status == "scored" else None for o in f] for f in found]
    for config, outcomes in zip(configs, found, strict=True):
        for query, outcome in zip(queries, outcomes, strict=True):
            expected = reference(config, query)
            if expected.score is not None and not 0 <= expected.score <= 100:
                continue  # the entry point repairs or diagnoses these (tested elsewhere)
            where = (config, query)
            assert outcome.status == expected.status, where
            assert outcome.reason == expected.reason, where
            assert _close(outcome.score, expected.score), (where, outcome, expected)
            assert _close(outcome.raw_score, expected.raw_score), (where, outcome, expected)


def test_a_pass_scores_every_metric_of_the_same_queries_alike_alone_or_together() -> None:
    queries = [
        QueryInput(docs=[ScoreDoc(d) for d in "abcde"], ratings={"a": 2, "c": 3, "x": 3}),
        QueryInput(docs=[], ratings={"a": 1}),
        QueryInput(docs=[ScoreDoc("a")], ratings={}),
    ]
    scale = (0, 1, 2, 3)
    configs = [
        ScorerConfig("ndcg", scale, {"k": 3, "ideal": "results", "unrated": "skip"}),
        ScorerConfig("err", scale, {"k": 10}),
        ScorerConfig("average_precision", scale, {"k": 2, "threshold": 2}),
    ]
    together = score_many(configs, queries)
    assert together == [score_many([c], queries)[0] for c in configs]
    # NDCG@3, skip, results: actual [2, 3] (b, d, e unrated), ideal [3, 2].
    ndcg = together[0][0].score
    assert ndcg is not None
    assert math.isclose(ndcg, 100 * (2 + 3 / math.log2(3)) / (3 + 2 / math.log2(3)))
    assert together[0][1].score == 0.0  # zero results with ratings: 0
    assert together[1][2].reason == "no ratings"
    # AP@2, threshold 2: a relevant at 1, b unrated at 2; two relevant ratings (a, c, x: 3).
    ap = together[2][0].score
    assert ap is not None
    assert math.isclose(ap, 100 * 1 / 3)


def test_a_rating_that_is_not_a_number_fails_its_query_alone() -> None:
    scale = (0, 1, 2, 3)
    queries = [
        QueryInput(docs=[ScoreDoc("a")], ratings={"a": "good"}),  # type: ignore[dict-item]
        QueryInput(docs=[ScoreDoc("a")], ratings={"a": math.nan}),
        QueryInput(docs=[ScoreDoc("a"), ScoreDoc("b")], ratings={"a": 3}),
    ]
    [outcomes] = score_many([ScorerConfig("precision", scale, {"k": 2})], queries)
    assert outcomes[0].status == "error"
    assert outcomes[0].reason == "the rating of doc 'a' is not a number"
    assert outcomes[1].reason == "the rating of doc 'a' is not a finite number"
    assert outcomes[2].score == 50.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-2, 9), max_size=14), min_size=1, max_size=20))
def test_both_ways_of_ordering_the_ideal_agree(rows: list[list[int]]) -> None:
    counts = np.asarray([len(r) for r in rows], dtype=np.int64)
    values = np.asarray([v for r in rows for v in r], dtype=np.float64)
    owners = np.repeat(np.arange(len(rows)), counts)
    expected = [sorted(r, reverse=True)[:5] for r in rows]
    if not values.size:
        return
    empty = np.full((len(rows), 5), np.nan)
    for ideal in (
        arrays._ideal_rows(values, counts, empty.copy()),
        arrays._ideal_sorted(values, owners, counts, empty.copy()),
    ):
        for row, best in zip(ideal.tolist(), expected, strict=True):
            assert [v for v in row if not math.isnan(v)] == best


def test_classic_in_chunks_of_queries_equals_the_reference(monkeypatch: Any) -> None:
    import random

    rng = random.Random(4)
    scale = tuple(range(1, 11))
    queries = []
    for _ in range(40):
        ratings = {d: float(rng.randint(1, 10)) for d in IDS if rng.random() < 0.5}
        ranking = rng.sample(IDS, rng.randint(0, 12))
        queries.append(QueryInput(docs=[ScoreDoc(d) for d in ranking], ratings=ratings))
    config = ScorerConfig("classic", scale, {"k": 12})
    monkeypatch.setattr(kernels, "_LEVENSHTEIN_CELLS", 300)  # two queries per chunk
    [found] = score_many([config], queries)
    assert found == [reference(config, q) for q in queries]
