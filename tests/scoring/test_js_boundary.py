"""The JavaScript sandbox speaks its own types; scoring's bridge turns its own into them."""

from __future__ import annotations

import math

import pytest

from app.sandbox import javascript as engine
from app.sandbox.types import JsQuery, JsResult, JsScorer, JsSyntaxError, js_error
from app.scoring import ScorerError, ScorerSyntaxError, score_queries
from app.scoring.js_bridge import _JsQueries, check_javascript, js_query, js_scorer, outcomes_of
from app.scoring.types import Outcome, ScoreDoc
from app.vocabulary import QueryStatus
from tests.scoring.helpers import config, query


def test_the_engine_scores_with_the_best_order_it_is_given() -> None:
    code = "setScore(bestDocs[0].rating * 10 + bestDocs.length)"
    scorer = JsScorer(code, (0.0, 1.0, 2.0, 3.0), max_score=100.0)
    # Not the order the ratings would give: the sandbox takes the caller's as it is.
    given = JsQuery(docs=[("a", {})], ratings={"a": 3, "b": 1}, best=[("b", 1), ("a", 3)])
    bad = JsQuery(docs=[("a", {})], ratings={"a": math.inf}, best=[])
    assert engine.score_in_process(scorer, [given, bad]) == [
        JsResult(QueryStatus.SCORED, 12.0, 12.0, None, ()),
        js_error("the rating of doc 'a' is not a finite number"),
    ]


def test_the_engine_raises_its_own_syntax_error_and_scoring_its_own() -> None:
    with pytest.raises(JsSyntaxError) as raw:
        engine.check_javascript("var a = 1;\nvar b = ;\n")
    assert not isinstance(raw.value, ScorerError)
    assert (raw.value.line, str(raw.value)) == (2, "SyntaxError: Unexpected token ';' (line 2)")
    with pytest.raises(ScorerSyntaxError) as bridged:
        check_javascript("var a = 1;\nvar b = ;\n")
    assert bridged.value.line == 2
    assert str(bridged.value) == "code: SyntaxError: Unexpected token ';' (line 2)"


def test_the_bridge_passes_the_best_order_and_the_scorer() -> None:
    made = js_query(query("ca", {"a": 1, "b": 3, "c": 1}, num_found=7, text="q"))
    assert made.best == [("b", 3), ("a", 1), ("c", 1)]
    assert made.docs == [ScoreDoc("c"), ScoreDoc("a")]
    assert (made.num_found, made.text) == (7, "q")
    js = config("javascript", code="setScore(1)", max_score=4, environment="quepid")
    assert js_scorer(js) == JsScorer("setScore(1)", (0, 1, 2, 3), 4.0, "quepid")
    assert js_scorer(config("ndcg")).code == ""  # the sandbox refuses it: no code


def test_a_batch_is_seen_as_queries_made_one_at_a_time() -> None:
    queries = [query("ab", {"a": 1, "b": 2}), query("c", {}), query("d", {"d": 3})]
    seen = _JsQueries(queries)
    assert len(seen) == 3
    assert list(seen) == [js_query(q) for q in queries]
    assert seen[1] == js_query(queries[1])
    assert seen[1:] == [js_query(queries[1]), js_query(queries[2])]
    assert seen[0].best == [("b", 2), ("a", 1)]


def test_results_become_equal_outcomes() -> None:
    results = [
        JsResult(QueryStatus.SCORED, 25.0, 1.0, None, ("seen",)),
        JsResult(QueryStatus.UNSCORED, None, None, "no ratings", ()),
        js_error("boom", ("a", "b")),
    ]
    assert outcomes_of(results) == [
        Outcome(QueryStatus.SCORED, 25.0, 1.0, None, ("seen",)),
        Outcome(QueryStatus.UNSCORED, None, None, "no ratings"),
        Outcome(QueryStatus.ERROR, None, None, "boom", ("a", "b")),
    ]


def test_ratings_that_are_not_numbers_fail_their_own_query_only() -> None:
    queries = [
        query("ab", {"a": "x", "b": 2}),  # type: ignore[dict-item]
        query("ab", {"a": None}),  # type: ignore[dict-item]
        query("ab", {"a": 3, "b": 1}),
    ]
    js = config("javascript", code="setScore(bestDocs.length + docRating(0))", max_score=10)
    outcomes = score_queries(js, queries)
    assert [o.reason for o in outcomes[:2]] == [
        "the rating of doc 'a' is not a finite number",
        "the rating of doc 'a' is not a finite number",
    ]
    assert (outcomes[2].status, outcomes[2].raw_score, outcomes[2].score) == ("scored", 5.0, 50.0)
