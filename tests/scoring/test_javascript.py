"""JavaScript scorers: the Quepid environment, isolation between queries, runaway scorers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.scoring import (
    Limits,
    QueryInput,
    ScoreDoc,
    ScorerSyntaxError,
    check_javascript,
    score_queries,
    score_query,
)
from tests.scoring.helpers import CLASSIC_SCALE, GRADED, config, query

QUEPID_CLASSIC = """
var score = avgRating100();
if (score !== null) {
  score -= editDistanceFromBest();
}
setScore(score);
"""

JS_NDCG = """
var k = 10;
var ideal = bestDocs.slice(0, k).map(function (d) { return d.rating; });
var dcg = 0, idcg = 0;
for (var i = 0; i < k; i++) {
  if (hasDocRating(i)) dcg += docRating(i) / Math.log2(i + 2);
  if (i < ideal.length) idcg += ideal[i] / Math.log2(i + 2);
}
setScore(idcg > 0 ? dcg / idcg : null);
"""


def js(code: str, scale: Any = GRADED, max_score: float | None = None) -> Any:
    """Return a validated JavaScript config."""
    return config("javascript", code=code, scale=scale, max_score=max_score)


def run(code: str, *queries: QueryInput, limits: Limits | None = None, **kw: Any) -> list[Any]:
    """Return the outcomes of code over the queries."""
    return score_queries(js(code, **kw), list(queries), limits=limits)


SHORT = Limits(time_s=0.2)
# Reaches its 64 MiB heap long before its time limit, however loaded the machine is.
ROOMY = Limits(time_s=30.0)

GOOD = query("ab", {"a": 3, "b": 1})

RUNAWAYS = [
    ("while (true) {}", "scorer exceeded its 0.2 s time limit", SHORT),
    (
        "var a = []; while (true) a.push(new Array(1e6));",
        "scorer exceeded its memory limit (64 MiB)",
        ROOMY,
    ),
    ("var x = 1;\n\nthrow new Error('boom');", "Error: boom (line 3)", SHORT),
    ("var x = 1;", "scorer did not call setScore", SHORT),
    ("setScore(NaN)", "setScore needs a finite number or null, got NaN", SHORT),
    ("setScore(Infinity)", "setScore needs a finite number or null, got Infinity", SHORT),
    ("setScore('12')", 'setScore needs a finite number or null, got the string "12"', SHORT),
    ("notAHelper()", "ReferenceError: notAHelper is not defined (line 1)", SHORT),
]


@pytest.mark.parametrize(("code", "message", "limits"), RUNAWAYS)
def test_a_runaway_query_fails_alone(code: str, message: str, limits: Limits) -> None:
    guarded = f"if (qOption('bad')) {{ {code} }} else {{ setScore(docRating(0) * 10); }}"
    bad = query("ab", {"a": 3}, query_options={"bad": True})
    outcomes = run(
        guarded.replace("{ var x = 1;\n\n", "{ var x = 1;\n"),
        GOOD, bad, GOOD, bad, GOOD,
        limits=limits,
    )  # fmt: skip
    assert [o.status for o in outcomes] == ["scored", "error", "scored", "error", "scored"]
    assert [o.score for o in outcomes[::2]] == [30, 30, 30]
    expected = message.replace("(line 3)", "(line 2)")
    assert outcomes[1].reason == expected
    assert outcomes[3].reason == expected


def test_default_time_limit_message() -> None:
    outcomes = run("if (qOption('loop')) { while (true) {} } setScore(1)",
                   query("a", {}, query_options={"loop": 1}), GOOD)  # fmt: skip
    assert outcomes[0].reason == "scorer exceeded its 1 s time limit"
    assert outcomes[1].score == 1


def test_line_numbers_count_from_the_users_first_line() -> None:
    outcome = score_query(js("setScore(1);\nvar a = null;\na.b = 1;"), GOOD)
    assert outcome.status == "scored"  # first setScore wins, like Quepid's promise
    outcome = score_query(js("var a = null;\n\na.b = 1;"), GOOD)
    assert outcome.reason is not None and outcome.reason.endswith("(line 3)")
    assert outcome.reason.startswith("TypeError")


def test_thrown_non_errors() -> None:
    assert score_query(js("throw 'nope'"), GOOD).reason == "scorer threw nope"


def test_null_is_unscored() -> None:
    outcome = score_query(js("setScore(null)"), GOOD)
    assert (outcome.status, outcome.reason) == ("unscored", "scorer returned null")


def test_max_score_scales_and_clamps() -> None:
    assert score_query(js("setScore(0.25)", max_score=1), GOOD).score == 25
    outcome = score_query(js("setScore(250)"), GOOD)
    assert (outcome.score, outcome.raw_score) == (100, 250)
    assert score_query(js("setScore(-5)"), GOOD).score == 0


def test_pass_fail_assert() -> None:
    assert score_query(js("pass()"), GOOD).score == 100
    assert score_query(js("pass()", max_score=1), GOOD).score == 100
    assert score_query(js("fail()"), GOOD).score == 0
    assert score_query(js("assert(numReturned() > 5); setScore(70)"), GOOD).score == 0
    assert score_query(js("assert(numReturned() == 2); setScore(70)"), GOOD).score == 70
    assert score_query(js("assertOrScore(false, 7); setScore(70)"), GOOD).score == 7
    assert score_query(js("assertOrScore(true, 7); setScore(70)"), GOOD).score == 70


def test_globals_do_not_leak_between_queries() -> None:
    code = """
    var seen = [typeof declared, typeof implicit, typeof viaThis, typeof viaGlobal,
                typeof Math.extra, typeof Array.prototype.extra, typeof fn];
    console.log(seen.join(','));
    var declared = 1;
    implicit = 2;
    this.viaThis = 3;
    globalThis.viaGlobal = 4;
    function fn() {}
    try { Math.extra = 5; } catch (e) {}
    try { Array.prototype.extra = 6; } catch (e) {}
    try { Math = null; } catch (e) {}
    setScore(typeof Math.log2 === 'function' ? 1 : 0);
    """
    outcomes = run(code, GOOD, GOOD, GOOD)
    assert [o.score for o in outcomes] == [1, 1, 1]
    fresh = "undefined,undefined,undefined,undefined,undefined,undefined,function"
    assert [o.log for o in outcomes] == [(fresh,)] * 3


def test_runner_cannot_be_driven_from_scorer_code() -> None:
    outcome = score_query(js("__relevo.run('guess', 1); setScore(1)"), GOOD)
    assert outcome.reason == "Error: not allowed (line 1)"


def test_timers_are_not_available() -> None:
    outcome = score_query(js("setTimeout(function () {}, 0); setScore(1)"), GOOD)
    assert outcome.status == "error"
    assert outcome.reason is not None and "timers are not available" in outcome.reason


def test_console_log_is_captured_and_capped() -> None:
    code = (
        "console.log('n', 1, {a: [1]}, null, undefined, NaN);"
        "for (var i = 0; i < 500; i++) console.log(i);"
        "setScore(1)"
    )
    outcome = score_query(js(code), GOOD)
    assert outcome.log[0] == 'n 1 {"a":[1]} null undefined NaN'
    assert len(outcome.log) == 200
    assert outcome.log[-1] == "198"
    failed = score_query(js("console.log('before'); throw new Error('x')"), GOOD)
    assert failed.log == ("before",)


def test_qoption_prefers_the_query_then_the_case() -> None:
    code = "setScore(qOption('a') * 100 + qOption('b') * 10 + (qOption('c') === null ? 1 : 0))"
    q = query("a", {}, query_options={"a": 1}, case_options={"a": 9, "b": 2})
    assert score_query(js(code, max_score=1000), q).raw_score == 121


def test_syntax_errors_report_the_users_line() -> None:
    with pytest.raises(ScorerSyntaxError) as info:
        check_javascript("var a = 1;\nvar b = 2;\nvar c = ;\n")
    assert info.value.line == 3
    assert info.value.field == "code"
    assert "SyntaxError" in info.value.message
    with pytest.raises(ScorerSyntaxError):
        check_javascript("}); globalThis.x = 1; (function () {")
    check_javascript("let max = 5; const docs = []; setScore(max)")  # shadowing helpers is fine


X_DOCS = QueryInput(
    docs=[ScoreDoc("a", {"title": "A", "n": 1}), ScoreDoc("b", {"title": "B"}), ScoreDoc("c")],
    ratings={"a": 2, "c": 3, "x": 3, "z": 0},
    num_found=42,
)


def env(expression: str, q: QueryInput = X_DOCS) -> Any:
    """Return the JSON value of an expression evaluated in the scorer environment."""
    outcome = score_query(js(f"console.log(JSON.stringify({expression})); setScore(0)"), q)
    assert outcome.status == "scored", outcome.reason
    return json.loads(outcome.log[0])


def test_every_helper() -> None:
    assert env("docs.map(function (d) { return [d.id, d.rating, d.rank, d.fields]; })") == [
        ["a", 2, 1, {"title": "A", "n": 1}], ["b", None, 2, {"title": "B"}], ["c", 3, 3, {}],
    ]  # fmt: skip
    assert env("bestDocs") == [{"id": "c", "rating": 3}, {"id": "x", "rating": 3},
                               {"id": "a", "rating": 2}, {"id": "z", "rating": 0}]  # fmt: skip
    assert env("[total, numFound(), numReturned()]") == [42, 42, 3]
    assert env("[docAt(0).title, docAt(0).id, docAt(5), docExistsAt(2), docExistsAt(3)]") == [
        "A", "a", {}, True, False,
    ]  # fmt: skip
    assert env("[hasDocRating(0), hasDocRating(1), hasDocRating(9), docRating(1)]") == [
        True, False, False, None,
    ]  # fmt: skip
    assert env("[docRating(2), docRating(9) === undefined]") == [
        3, True,
    ]  # fmt: skip
    assert env("[avgRating(), avgRating(1), avgRating100(), avgRating100(1)]") == [2.5, 2, 83, 66]
    assert env("[editDistanceFromBest(), editDistanceFromBest(1)]") == [4, 1]
    collect = "(function () { var out = []; %s; return out; })()"
    each_doc = "eachDoc(function (d, i) { out.push(d.id + i); }, 2)"
    assert env(collect % each_doc) == ["a0", "b1"]
    each_rated = "eachDocWithRating(function (d) { out.push(d.id); })"
    assert env(collect % each_rated) == ["c", "x", "a", "z"]
    each_equal = "eachDocWithRatingEqualTo(3, function (d) { out.push(d.getRating()); })"
    assert env(collect % each_equal) == [3, 3]
    assert env("[topRatings(2), topRatings(10)]") == [[3, 3], [3, 3, 2, 0]]
    assert env("[max, scale]") == [3, [0, 1, 2, 3]]
    nothing = query("bc", {"x": 1})
    assert env("[avgRating(), avgRating100(), numFound()]", nothing) == [None, None, 2]


def test_scorer_mutating_its_data_does_not_affect_the_next_query() -> None:
    code = "console.log(docs.length, scale.length); docs.pop(); scale.pop(); setScore(1)"
    outcomes = run(code, GOOD, GOOD)
    assert [o.log for o in outcomes] == [("2 4",), ("2 4",)]


def test_quepid_scorers_run_unchanged() -> None:
    ap = """let k = 10; let count = 0; let totalRel = 0; total = 0;
    k = numReturned() < k ? numReturned() : k
    eachDoc(function(doc, i) {
      if (hasDocRating(i) && (docRating(i)) > 0) { count++; total += count/(i+1) }
    }, k);
    eachDocWithRating(function(doc) { if (doc.rating > 0) { totalRel++; } }, bestDocs.length);
    const score = total / totalRel;
    setScore(score);"""  # fmt: skip
    q = query("ab", {"a": 0, "b": 1, "c": 1})
    assert score_query(js(ap, scale=(0, 1), max_score=1), q).raw_score == 0.25


def test_many_queries_in_one_batch() -> None:
    queries = [query("abcdefghij", {c: (i + n) % 4 for i, c in enumerate("abcdefghijk")})
               for n in range(3000)]  # fmt: skip
    ours = score_queries(js(JS_NDCG, max_score=1), queries)
    builtin = score_queries(config("ndcg"), queries)
    assert [o.score for o in ours] == pytest.approx([o.score for o in builtin], abs=1e-9)


ratings_st = st.dictionaries(st.sampled_from("abcdefghijkl"), st.integers(1, 10), max_size=12)
ranking_st = st.lists(st.sampled_from("abcdefghijkl"), unique=True, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ranking_st, ratings_st), min_size=1, max_size=20))
def test_quepid_classic_equals_builtin_classic(
    cases: list[tuple[list[str], dict[str, int]]],
) -> None:
    queries = [query(ranking, ratings) for ranking, ratings in cases]
    ours = score_queries(js(QUEPID_CLASSIC, scale=CLASSIC_SCALE), queries)
    builtin = score_queries(config("classic", scale=CLASSIC_SCALE), queries)
    for mine, theirs in zip(ours, builtin, strict=True):
        assert mine.score == theirs.score
        assert (mine.status == "scored") == (theirs.status == "scored")


graded_st = st.dictionaries(st.sampled_from("abcdefghijkl"), st.sampled_from(GRADED), max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ranking_st, graded_st), min_size=1, max_size=20))
def test_js_ndcg_equals_builtin_ndcg(cases: list[tuple[list[str], dict[str, int]]]) -> None:
    queries = [query(ranking, ratings) for ranking, ratings in cases if ratings and ranking]
    ours = score_queries(js(JS_NDCG, max_score=1), queries)
    builtin = score_queries(config("ndcg"), queries)
    for mine, theirs in zip(ours, builtin, strict=True):
        assert mine.status == theirs.status
        if theirs.score is not None:
            assert mine.score == pytest.approx(theirs.score, abs=1e-9)
