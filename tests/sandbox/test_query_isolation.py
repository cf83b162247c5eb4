"""Nothing a JavaScript scorer can reach carries anything from one query to the next.

Each case runs the same scorer over four queries in one batch, through the worker processes
(``score_queries``) and in this process (``score_javascript_in_process``), in both
environments: every query must see exactly what a fresh isolate shows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

import pytest

from app.sandbox import JsPool, PoolSettings, install_pool
from app.sandbox import isolate as js_isolate
from app.scoring import QueryInput, score_queries
from app.scoring.js_bridge import score_javascript_in_process
from app.scoring.types import Outcome, ScorerConfig
from tests.scoring.helpers import config, query

Score = Callable[[ScorerConfig, Sequence[QueryInput]], list[Outcome]]

# Four queries, each with its own doc ids, so that a leaked id names the query it came from.
QUERIES = [query([f"q{n}-a", f"q{n}-b"], {f"q{n}-a": 2, f"q{n}-b": 1}) for n in range(4)]

COUNTERS = {
    "function object": "var f = arguments.callee; f.n = (f.n || 0) + 1; setScore(f.n);",
    "function prototype": (
        "var p = arguments.callee.prototype; p.n = (p.n || 0) + 1; setScore(p.n);"
    ),
    "non-configurable global": (
        "if (!('p' in globalThis)) Object.defineProperty(globalThis, 'p', {value: {n: 0}});"
        " p.n++; setScore(p.n);"
    ),
    "frozen global object": (
        "if (typeof c === 'undefined') { c = {n: 0}; Object.freeze(globalThis); }"
        " c.n++; setScore(c.n);"
    ),
    "global object's new prototype": (
        "if (typeof kept === 'undefined') Object.setPrototypeOf(globalThis, {kept: {n: 0}});"
        " kept.n++; setScore(kept.n);"
    ),
}

# Where a scorer could leave the first doc id of its query for the next one: (how it reads
# what it finds there, how it writes its own id there).
STASHES = {
    "function object": ("arguments.callee.seen", "arguments.callee.seen = id"),
    "function prototype": (
        "arguments.callee.prototype.seen",
        "arguments.callee.prototype.seen = id",
    ),
    "non-configurable global": (
        "globalThis.seen",
        "Object.defineProperty(globalThis, 'seen', {value: id, configurable: false})",
    ),
    "global object's prototype": (
        "Object.getPrototypeOf(globalThis).seen",
        "Object.getPrototypeOf(globalThis).seen = id",
    ),
    "global object's new prototype": (
        "typeof seen === 'undefined' ? undefined : seen",
        "Object.setPrototypeOf(globalThis, {seen: id})",
    ),
    "Array.prototype": ("[].seen", "Array.prototype.seen = id"),
    "Object.prototype": ("({}).seen", "Object.prototype.seen = id"),
    "console.log": ("console.log.seen", "console.log.seen = id"),
    "docs' prototype": ("docs[0].hasRating.seen", "docs[0].hasRating.seen = id"),
    "bestDocs' prototype": ("bestDocs[0].getRating.seen", "bestDocs[0].getRating.seen = id"),
    "__relevo": ("__relevo.run.seen", "__relevo.run.seen = id"),
    "Intl segments": (
        "Object.getPrototypeOf(new Intl.Segmenter().segment('')).seen",
        "Object.getPrototypeOf(new Intl.Segmenter().segment('')).seen = id",
    ),
    "iterator helpers": (
        "Object.getPrototypeOf([].values().map(String)).seen",
        "Object.getPrototypeOf([].values().map(String)).seen = id",
    ),
    "RegExp.lastMatch": ("RegExp.lastMatch || undefined", "/q\\d-a/.exec(id)"),
    "RegExp.input": ("RegExp.input || undefined", "/-/.test(id)"),
}


def stash_scorer(read: str, write: str) -> str:
    """Return a scorer that logs what it finds in the stash, then leaves its own id there."""
    return f"""
    var id = docs[0].id;
    var found;
    try {{ found = {read}; }} catch (e) {{ found = 'threw ' + e; }}
    console.log(String(found));
    try {{ {write}; }} catch (e) {{}}
    setScore(1);
    """


@pytest.fixture(scope="module")
def pool() -> Iterator[JsPool]:
    """Install one pool for the module, so that its cases reuse two worker processes."""
    with JsPool(PoolSettings(workers=2)) as own:
        previous = install_pool(own)
        try:
            yield own
        finally:
            install_pool(previous)


@pytest.fixture(params=["worker", "in-process"])
def score(request: pytest.FixtureRequest, pool: JsPool) -> Score:
    """Return the way a batch is scored: through the workers or in this process."""
    if request.param == "worker":
        return lambda cfg, queries: score_queries(cfg, queries)
    return score_javascript_in_process


ENVIRONMENTS = ["relevo", "quepid"]


def js(code: str, environment: str) -> ScorerConfig:
    return config("javascript", code=code, environment=environment)


@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize("code", COUNTERS.values(), ids=list(COUNTERS))
def test_a_counter_starts_afresh_on_every_query(score: Score, code: str, environment: str) -> None:
    outcomes = score(js(code, environment), QUERIES)
    assert [(o.status, o.raw_score) for o in outcomes] == [("scored", 1.0)] * 4


@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize(("read", "write"), STASHES.values(), ids=list(STASHES))
def test_a_query_finds_nothing_of_the_previous_one(
    score: Score, read: str, write: str, environment: str
) -> None:
    outcomes = score(js(stash_scorer(read, write), environment), QUERIES)
    assert [(o.status, o.log) for o in outcomes] == [("scored", ("undefined",))] * 4


def test_the_stash_scorer_does_see_its_own_stash_within_a_query() -> None:
    # Shows the stash scorers write somewhere readable: the same query reads its own id back.
    code = "var id = docs[0].id; arguments.callee.seen = id; setScore(1);"
    code += " console.log(arguments.callee.seen, RegExp.lastMatch || '-', /q\\d/.exec(id)[0]);"
    code += " console.log(RegExp.lastMatch);"
    outcomes = score_javascript_in_process(js(code, "relevo"), QUERIES[:2])
    assert [o.log for o in outcomes] == [("q0-a - q0", "q0"), ("q1-a - q1", "q1")]


def test_queries_after_a_tainting_one_rerun_in_order(score: Score) -> None:
    # Every query makes a global that cannot be deleted, then scores 10 x its option n plus
    # how many such globals it sees: each query after the first is rerun in a new isolate.
    code = (
        "Object.defineProperty(globalThis, 'n' + qOption('n'), {value: 1});"
        " var mine = Object.getOwnPropertyNames(globalThis).filter(function (k) {"
        " return /^n[0-9]+$/.test(k); });"
        " setScore(10 * qOption('n') + mine.length);"
    )
    queries = [query(["a"], {"a": 1}, query_options={"n": n}) for n in range(30)]
    outcomes = score(js(code, "relevo"), queries)
    assert [o.raw_score for o in outcomes] == [10 * n + 1 for n in range(30)]


def test_a_query_refused_by_a_new_isolate_fails_instead_of_looping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refusing(_body: str, _globals: int, marker: str) -> str:
        return f"throw new Error({json.dumps(marker)});"

    monkeypatch.setattr(js_isolate, "_runner_body", refusing)
    outcomes = score_javascript_in_process(js("setScore(1)", "relevo"), QUERIES)
    assert [o.reason for o in outcomes] == ["scorer failed: its isolate could not be set up"] * 4


def test_line_numbers_and_this_are_those_of_the_users_function() -> None:
    code = "var self = this;\n\nif (self !== globalThis) setScore(0);\nelse undefinedName();"
    outcome = score_javascript_in_process(js(code, "relevo"), QUERIES[:1])[0]
    assert outcome.reason == "ReferenceError: undefinedName is not defined (line 4)"
