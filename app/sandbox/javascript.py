"""Runs Quepid-compatible JavaScript scorers in V8 isolates (mini-racer): a batch's queries.

This is the engine; it runs in whatever process calls it, and a few huge allocations make V8
abort that whole process. Relevo therefore calls it only inside the worker process of
``app.sandbox``; ``check_javascript`` stays here because it only compiles the code
(``new Function``), it never runs it. It speaks the sandbox's own types (``types``).

One isolate serves a whole batch. Queries are sent in chunks and run in "slices": one eval
runs queries until ``JS_SLICE_S`` has passed, so the eval overhead (~0.2 ms) is paid per
slice, not per query. A slice's eval may last ``JS_TIME_LIMIT_S + JS_SLICE_S``; since a
query only starts within the first ``JS_SLICE_S``, each query gets at least its full time
limit, and a slice that times out was stopped inside a query that overran it.

Each query starts from the state a fresh isolate would give it (``isolate``); a query the
isolate refuses to run, and the rest, go on in a new isolate.

Before each eval the batch calls its optional ``step`` hook with the outcomes finished since
the previous call, how many queries the eval may touch (0: none in particular) and how long
it may take, so that a supervising process knows which queries a crash can be blamed on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException

from app.sandbox.isolate import Isolate
from app.sandbox.limits import (
    JS_SLICE_S,
    SETUP_TIMEOUT_S,
    Limits,
    memory_message,
    stopped_message,
    time_message,
)
from app.sandbox.prelude import LINE_OFFSET, PARAMS, function_body
from app.sandbox.queries import config_problem, encode_queries, merge
from app.sandbox.types import (
    JsQuery,
    JsResult,
    JsScorer,
    JsSyntaxError,
    js_error,
    js_unscored,
)
from app.sandbox.v8 import close_racer, new_racer
from app.vocabulary import QueryStatus

__all__ = ["Step", "check_javascript", "run_batch", "score_in_process"]

# Called before each eval: (results finished since the last call, queries the eval may
# touch starting at the first unfinished one, the eval's longest duration in seconds).
Step = Callable[[Sequence[JsResult], int, float], None]

CHUNK_QUERIES = 2000
CHUNK_CHARS = 2_000_000
# Reading back a stopped slice takes milliseconds once V8 has honoured the termination; some
# long built-ins (a huge fill) ignore it, and then this short step lets a supervisor step in.
_RECOVER_S = 0.25


def _to_result(item: Sequence[Any], max_score: float) -> JsResult:
    kind, value, logs = item
    log = tuple(logs)
    if kind == "s":
        raw = float(value)
        return JsResult(
            QueryStatus.SCORED, 100 * min(max(raw, 0.0), max_score) / max_score, raw, None, log
        )
    if kind == "u":  # the Quepid environment says why (no results, no ratings)
        return js_unscored(value if isinstance(value, str) else "scorer returned null", log)
    return js_error(str(value), log)


class _Batch:
    """Scores encoded queries in order, replacing the isolate when a query breaks it."""

    def __init__(
        self,
        code: str,
        scale: Sequence[float],
        max_score: float,
        parts: Sequence[str],
        limits: Limits,
        single_until: int,
        step: Step | None,
        environment: str = "relevo",
    ) -> None:
        self.environment = environment
        self.code = code
        self.scale = scale
        self.max_score = max_score
        self.parts = parts
        self.time_limit, self.heap_limit = limits.time_s, limits.heap_bytes
        self.max_timeouts = max(1, limits.max_timeouts_in_a_row)
        self.timeouts_in_a_row = 0
        self.outcomes: list[JsResult | None] = [None] * len(parts)
        self.pos = 0
        self.reported = 0
        self.single_until = single_until
        self.step = step
        self.isolate: Isolate | None = None

    def _announce(self, count: int, seconds: float) -> None:
        if self.step is not None:
            done = [o for o in self.outcomes[self.reported : self.pos] if o is not None]
            self.reported = self.pos
            self.step(done, count, seconds)

    def _store(self, items: Sequence[Sequence[Any]]) -> bool:
        """Keep the outcomes of items in order; False: a query refused to run, start afresh.

        The queries from the refusing one on (the rest of the items refused too) are run
        again in a new isolate; one that refuses in a new isolate is an error, so a batch
        never loops.
        """
        assert self.isolate is not None
        for item in items:
            if item[0] == "e" and item[1] == self.isolate.refusal:
                if self.isolate.scored == 0:
                    self._fail_current("scorer failed: its isolate could not be set up")
                self._drop_isolate()
                return False
            self.outcomes[self.pos] = _to_result(item, self.max_score)
            self.pos += 1
            self.isolate.scored += 1
            self.timeouts_in_a_row = 0
        return True

    def _fail_current(self, message: str, logs: Sequence[str] = ()) -> None:
        self.outcomes[self.pos] = js_error(message, tuple(logs))
        self.pos += 1
        if message == time_message(self.time_limit):
            self.timeouts_in_a_row += 1
        else:
            self.timeouts_in_a_row = 0

    def _drop_isolate(self) -> None:
        if self.isolate is not None:
            self.isolate.close()
            self.isolate = None

    def _chunk_end(self) -> int:
        end, size = self.pos, 0
        limit = 1 if self.pos < self.single_until else CHUNK_QUERIES
        while end < len(self.parts) and end - self.pos < limit:
            size += len(self.parts[end])
            end += 1
            if size > CHUNK_CHARS:
                break
        return end

    def run(self) -> list[JsResult]:
        try:
            while self.pos < len(self.parts):
                if self.timeouts_in_a_row >= self.max_timeouts:
                    message = stopped_message(self.timeouts_in_a_row)
                    while self.pos < len(self.parts):
                        self._fail_current(message)
                    break
                self._run_chunk()
        except Exception as exc:  # the batch must never raise: report what is left as errors
            while self.pos < len(self.parts):
                self._fail_current(f"scorer failed: {exc}")
        finally:
            self._drop_isolate()
        return [
            outcome if outcome is not None else js_error("not scored") for outcome in self.outcomes
        ]

    def _run_chunk(self) -> None:
        if self.isolate is None:
            self._announce(0, Isolate.SETUP_S)
            self.isolate = Isolate(self.code, self.scale, self.heap_limit, self.environment)
            if self.isolate.compile_error is not None:
                while self.pos < len(self.parts):
                    self._fail_current(
                        f"scorer code does not compile: {self.isolate.compile_error}"
                    )
                return
        end = self._chunk_end()
        self._announce(end - self.pos, SETUP_TIMEOUT_S)
        try:
            self.isolate.load(self.parts[self.pos : end])
        except JSEvalException as exc:
            self._drop_isolate()
            if end - self.pos > 1:
                self.single_until = end
            else:
                self._fail_current(f"the query's data does not fit the scorer's limits: {exc}")
            return
        while self.pos < end and self.isolate is not None:
            if self.timeouts_in_a_row >= self.max_timeouts:
                return
            self._run_slice(end)

    def _run_slice(self, end: int) -> None:
        assert self.isolate is not None
        max_count = 1 if self.pos < self.single_until else end - self.pos
        timeout = self.time_limit + JS_SLICE_S
        self._announce(max_count, timeout)
        try:
            items, tainted = self.isolate.run(max_count, timeout)
        except JSTimeoutException:
            self._recover(end, max_count, time_message(self.time_limit), keep=True)
            return
        except JSOOMException:
            self._recover(end, max_count, memory_message(self.heap_limit), keep=False)
            return
        except JSEvalException as exc:
            self._recover(end, max_count, f"scorer failed: {exc}", keep=False)
            return
        if not self._store(items):
            return
        if tainted:  # a global could not be deleted: later queries get a clean isolate
            self._drop_isolate()

    def _recover(self, end: int, count: int, message: str, *, keep: bool) -> None:
        assert self.isolate is not None
        start = self.pos
        self._announce(count, _RECOVER_S)
        try:
            items, running, logs = self.isolate.interrupted()
        except JSEvalException:
            keep = False
        else:
            if not self._store(items):
                return
            if running and self.pos < len(self.parts):
                self._fail_current(message, logs)
        if not keep:
            self._drop_isolate()
        if self.pos == start:  # which query broke the isolate is unknown
            if self.pos < self.single_until or end - self.pos == 1:
                self._fail_current(message)
            else:  # retry this chunk's queries one by one to find it
                self.single_until = end


def run_batch(
    code: str,
    scale: Sequence[float],
    max_score: float,
    parts: Sequence[str],
    *,
    limits: Limits | None = None,
    single_until: int = 0,
    step: Step | None = None,
    environment: str = "relevo",
) -> list[JsResult]:
    """Return the results of encoded queries, run in this process (see the module docstring)."""
    batch = _Batch(
        code, scale, max_score, parts, limits or Limits(), single_until, step, environment
    )
    return batch.run()


def score_in_process(scorer: JsScorer, queries: Sequence[JsQuery]) -> list[JsResult]:
    """Return a batch's results computed in this process: a V8 abort kills the caller."""
    problem = config_problem(scorer)
    if problem is not None:
        return [js_error(problem) for _ in range(len(queries))]
    outcomes, parts = encode_queries(queries)
    results = run_batch(
        scorer.code, scorer.scale, scorer.max_score, parts, environment=scorer.environment
    )
    return merge(outcomes, results)


_SYNTAX_LINE = re.compile(r":(\d+): (SyntaxError: [^\n]*)")


@lru_cache(maxsize=256)
def _syntax_problem(code: str) -> tuple[str, int | None] | None:
    racer = new_racer()
    try:
        params = ", ".join(json.dumps(name) for name in PARAMS)
        racer.eval(f"new Function({params}, {json.dumps(function_body(code))}); 0", timeout_sec=5)
    except JSEvalException as exc:
        match = _SYNTAX_LINE.search(str(exc))
        if match is None:
            return (str(exc).strip().splitlines()[-1], None)
        # An unexpected end of input is reported on our closing line: clamp to the user's last.
        line = min(max(1, int(match.group(1)) - LINE_OFFSET), code.count("\n") + 1)
        return (match.group(2), line)
    finally:
        close_racer(racer)
    return None


def check_javascript(code: str) -> None:
    """Raise JsSyntaxError (message, 1-based line) when the scorer's code does not parse."""
    problem = _syntax_problem(code)
    if problem is not None:
        raise JsSyntaxError(*problem)
