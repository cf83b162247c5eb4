"""Runs Quepid-compatible JavaScript scorers in a V8 isolate (mini-racer).

This is the engine; it runs in whatever process calls it, and a few huge allocations make V8
abort that whole process. Relevo therefore calls it only inside the worker process of
``app.scoring.sandbox``; ``check_javascript`` stays here because it only compiles the code
(``new Function``), it never runs it.

One isolate serves a whole batch. Queries are sent in chunks and run in "slices": one eval
runs queries until ``JS_SLICE_S`` has passed, so the eval overhead (~0.2 ms) is paid per
slice, not per query. A slice's eval may last ``JS_TIME_LIMIT_S + JS_SLICE_S``; since a
query only starts within the first ``JS_SLICE_S``, each query gets at least its full time
limit, and a slice that times out was stopped inside a query that overran it.

Each query starts from the state a fresh isolate would give it. The prelude deletes the
globals the previous query made; on top of that the isolate is locked further once
(``_LOCKDOWN``: the prelude's own objects, the global object's prototype, the intrinsics only
instances reach) and the function the prelude calls per query is ``_RUNNER``, which compiles
the user's code into a new function for every query (V8's compilation cache makes that
cheap), so nothing hangs off the function object or its prototype, and clears RegExp's
legacy match state. A global the prelude could not delete, or a global object made
non-extensible or given another prototype, cannot be undone in place: ``_RUNNER`` then
refuses to run the query (``restart``) and the batch reruns it, and the rest, in a new
isolate.

Before each eval the batch calls its optional ``step`` hook with the outcomes finished since
the previous call, how many queries the eval may touch (0: none in particular) and how long
it may take, so that a supervising process knows which queries a crash can be blamed on.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from py_mini_racer import (
    JSEvalException,
    JSOOMException,
    JSTimeoutException,
    MiniRacer,
)

from app.scoring.errors import ScorerSyntaxError
from app.scoring.prelude import (
    LINE_OFFSET,
    PARAMS,
    function_body,
    prelude_constants,
    prelude_source,
)
from app.scoring.ranking import best_order
from app.scoring.types import Outcome, QueryInput, ScorerConfig, failed, unscored
from app.vocabulary import QueryStatus

# Called before each eval: (outcomes finished since the last call, queries the eval may
# touch starting at the first unfinished one, the eval's longest duration in seconds).
Step = Callable[[Sequence[Outcome], int, float], None]

JS_TIME_LIMIT_S = 1.0
JS_HEAP_LIMIT_BYTES = 64 * 1024 * 1024
# A batch whose queries hit the time limit this many times in a row stops: the rest error.
JS_MAX_TIMEOUTS_IN_A_ROW = 5
JS_SLICE_S = 0.05
CHUNK_QUERIES = 2000
CHUNK_CHARS = 2_000_000
_SETUP_TIMEOUT_S = 10.0
# Reading back a stopped slice takes milliseconds once V8 has honoured the termination; some
# long built-ins (a huge fill) ignore it, and then this short step lets a supervisor step in.
_RECOVER_S = 0.25


@dataclass(frozen=True)
class Limits:
    """What one batch may use: seconds per query, V8 heap bytes, time-limit hits in a row."""

    time_s: float = JS_TIME_LIMIT_S
    heap_bytes: int = JS_HEAP_LIMIT_BYTES
    max_timeouts_in_a_row: int = JS_MAX_TIMEOUTS_IN_A_ROW


class _QueryDataError(Exception):
    """The query's data cannot be handed to JavaScript."""


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _plain(value: Any) -> Any:
    """Return value as JSON-ready data: mappings and sequences copied, non-finite floats null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)


def _default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return str(value)


def encode_query(query: QueryInput) -> str:
    """Return the query as the compact JSON array the prelude reads."""
    ratings = query.ratings
    for doc_id, rating in ratings.items():
        if not _is_finite_number(rating):
            raise _QueryDataError(f"the rating of doc {doc_id!r} is not a finite number")
    get = ratings.get
    docs = [[doc.id, get(doc.id), doc.fields or None] for doc in query.docs]
    total = query.num_found if query.num_found is not None else len(query.docs)
    options = {**query.case_options, **query.query_options}
    data = [docs, best_order(ratings), total, options, query.text, query.query_options]
    try:
        return json.dumps(data, allow_nan=False, default=_default, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        try:
            return json.dumps(_plain(data), allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError) as exc:
            raise _QueryDataError(
                f"the query's data cannot be passed to the scorer: {exc}"
            ) from exc


# Evaluated once per isolate, right after the prelude; returns how many own keys the global
# object has, which is how many it must have when a query starts. It freezes what the prelude
# leaves open: the methods of ``__relevo``, the intrinsics that only instances reach (V8's
# Intl segments and iterator helpers), and the global object's own prototype, an open object
# that would carry globals from one query to the next; the global object inherits from the
# frozen Object.prototype directly instead, so that _RUNNER can check it has not changed.
_LOCKDOWN = r"""
(function () {
  'use strict';
  const seen = new Set();
  const lock = (value) => {
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
    if (seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    lock(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const d = Object.getOwnPropertyDescriptor(value, key);
      if ('value' in d) lock(d.value); else { lock(d.get); lock(d.set); }
    }
  };
  lock(Object.getPrototypeOf(globalThis));
  Object.setPrototypeOf(globalThis, Object.prototype);
  lock(globalThis.__relevo);
  if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
    const segments = new Intl.Segmenter().segment('');
    lock(segments);
    lock(segments[Symbol.iterator]());
  }
  if (typeof Iterator === 'function') {
    lock([].values().map((x) => x));
    lock(Iterator.from({ next() { return { done: true }; } }));
  }
  return Reflect.ownKeys(globalThis).length;
})()
"""

# The body of the function the prelude calls once per query, with the helpers as arguments.
# Strict, so that the user's function cannot reach it through ``caller``. It refuses to run
# the query (throws RESTART) when the global object is not as a fresh isolate has it, locks
# the prelude's objects that only the arguments reach (the first time it sees them), resets
# RegExp.$1, lastMatch and the rest, and runs the user's code as a new function.
_RUNNER = """'use strict';
if (Reflect.ownKeys(globalThis).length !== %(globals)d || !Object.isExtensible(globalThis)
    || Object.getPrototypeOf(globalThis) !== Object.prototype) {
  throw new Error(%(restart)s);
}
/(?:)/.exec('');
if (!Object.isFrozen(console.log)) {
  for (const key of Reflect.ownKeys(console)) Object.freeze(console[key]);
}
for (const list of [docs, bestDocs]) {
  const proto = list.length > 0 ? Object.getPrototypeOf(list[0]) : null;
  if (proto !== null && !Object.isFrozen(proto.getRating)) {
    for (const key of Reflect.ownKeys(proto)) Object.freeze(proto[key]);
  }
}
return Reflect.apply(new Function(%(params)s, %(body)s), undefined, arguments);
//# sourceURL=relevo-runner.js"""


def _runner_body(body: str, globals_count: int, marker: str) -> str:
    """Return _RUNNER for the user's function body (as ``function_body`` makes it)."""
    params = ", ".join(json.dumps(name) for name in PARAMS)
    values = {"globals": globals_count, "restart": json.dumps(marker)}
    return _RUNNER % {**values, "params": params, "body": json.dumps(body)}


class _Creator:
    """The one thread of a process that creates its V8 contexts.

    V8 aborts ("Check failed: !IsConfigurablePoolInitialized()") or crashes the process when
    several threads create their first contexts at once, and a lock is not enough: contexts
    created or closed one at a time, but by different threads that all existed before V8
    started, crash it too. So one thread creates and closes them all; any thread may use them.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = 0
        self.executor: ThreadPoolExecutor | None = None

    def _executor(self) -> ThreadPoolExecutor:
        with self.lock:
            if self.executor is None or self.pid != os.getpid():  # a forked child: a new one
                self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="relevo-v8")
                self.pid = os.getpid()
            return self.executor

    def new_racer(self) -> MiniRacer:
        """Return a new V8 context, created on this process's V8 thread."""
        return self._executor().submit(MiniRacer).result()

    def close(self, racer: MiniRacer) -> None:
        """Close a context on this process's V8 thread."""
        self._executor().submit(racer.close).result()


_CREATOR = _Creator()
_new_racer = _CREATOR.new_racer
_close_racer = _CREATOR.close


class _Isolate:
    """One V8 isolate with the prelude installed and the user's code compiled."""

    # The longest __init__ may take: the evals that can be slow (the prelude, the lockdown
    # and two compiles of the user's code).
    SETUP_S = 4 * _SETUP_TIMEOUT_S

    def __init__(
        self, code: str, scale: Sequence[float], heap_limit: int, environment: str = "relevo"
    ) -> None:
        self._racer = _new_racer()
        self._token = json.dumps(secrets.token_hex(16))
        # The message _RUNNER throws when it refuses to run a query; unguessable by the scorer.
        marker = "relevo-restart-" + secrets.token_hex(16)
        self.refusal = "Error: " + marker  # what the prelude reports for that query
        self.scored = 0  # queries whose outcome this isolate gave
        try:
            self._racer.set_hard_memory_limit(heap_limit)
            slice_ms = max(1, round(JS_SLICE_S * 1000))
            # No WebAssembly: its memories and compilers are a way around the heap limit.
            self._racer.eval("delete globalThis.WebAssembly", timeout_sec=_SETUP_TIMEOUT_S)
            constants = prelude_constants()
            setup = f"({prelude_source()})(globalThis, {self._token}, {slice_ms}, {constants})"
            self._racer.eval(setup, timeout_sec=_SETUP_TIMEOUT_S)
            globals_count = int(self._eval(_LOCKDOWN))
            body = function_body(code)
            error = self._setup(body, scale, environment)  # the user's code, to see it compile
            if error is None:
                runner = _runner_body(body, globals_count, marker)
                error = self._setup(runner, scale, environment)
        except BaseException:
            self.close()
            raise
        self.compile_error = error

    def _setup(self, body: str, scale: Sequence[float], environment: str) -> str | None:
        scale_json = json.dumps(json.dumps(list(scale)))
        args = f"{self._token}, {json.dumps(body)}, {scale_json}, {json.dumps(environment)}"
        error = self._eval(f"__relevo.setup({args})")
        return error if isinstance(error, str) else None

    def _eval(self, expression: str, timeout: float = _SETUP_TIMEOUT_S) -> Any:
        return self._racer.eval(expression, timeout_sec=timeout)

    def load(self, parts: Sequence[str]) -> None:
        data = json.dumps("[" + ",".join(parts) + "]")
        self._eval(f"__relevo.load({self._token}, {data})")

    def run(self, max_count: int, timeout: float) -> tuple[list[list[Any]], bool]:
        out = self._eval(f"__relevo.run({self._token}, {max_count})", timeout)
        result = json.loads(out)
        return result["r"], bool(result["t"])

    def interrupted(self) -> tuple[list[list[Any]], bool, list[str]]:
        result = json.loads(self._eval(f"__relevo.interrupted({self._token})"))
        return result["r"], bool(result["running"]), list(result["logs"])

    def close(self) -> None:
        _close_racer(self._racer)


def _to_outcome(item: Sequence[Any], max_score: float) -> Outcome:
    kind, value, logs = item
    log = tuple(logs)
    if kind == "s":
        raw = float(value)
        return Outcome(
            QueryStatus.SCORED, 100 * min(max(raw, 0.0), max_score) / max_score, raw, None, log
        )
    if kind == "u":  # the Quepid environment says why (no results, no ratings)
        return unscored(value if isinstance(value, str) else "scorer returned null", log)
    return failed(str(value), log)


def time_message(time_limit: float) -> str:
    """Return the reason of a query that overran its time limit."""
    return f"scorer exceeded its {time_limit:g} s time limit"


def stopped_message(count: int) -> str:
    """Return the reason of the queries left after ``count`` time-limit hits in a row."""
    return f"stopped: the scorer hit its time limit on {count} queries in a row"


def memory_message(heap_limit: int) -> str:
    """Return the reason of a query that overran its heap limit."""
    return f"scorer exceeded its memory limit ({heap_limit / 2**20:g} MiB)"


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
        self.outcomes: list[Outcome | None] = [None] * len(parts)
        self.pos = 0
        self.reported = 0
        self.single_until = single_until
        self.step = step
        self.isolate: _Isolate | None = None

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
            self.outcomes[self.pos] = _to_outcome(item, self.max_score)
            self.pos += 1
            self.isolate.scored += 1
            self.timeouts_in_a_row = 0
        return True

    def _fail_current(self, message: str, logs: Sequence[str] = ()) -> None:
        self.outcomes[self.pos] = failed(message, tuple(logs))
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

    def run(self) -> list[Outcome]:
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
            outcome if outcome is not None else failed("not scored") for outcome in self.outcomes
        ]

    def _run_chunk(self) -> None:
        if self.isolate is None:
            self._announce(0, _Isolate.SETUP_S)
            self.isolate = _Isolate(self.code, self.scale, self.heap_limit, self.environment)
            if self.isolate.compile_error is not None:
                while self.pos < len(self.parts):
                    self._fail_current(
                        f"scorer code does not compile: {self.isolate.compile_error}"
                    )
                return
        end = self._chunk_end()
        self._announce(end - self.pos, _SETUP_TIMEOUT_S)
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
) -> list[Outcome]:
    """Return the outcomes of encoded queries, run in this process (see the module docstring)."""
    batch = _Batch(
        code, scale, max_score, parts, limits or Limits(), single_until, step, environment
    )
    return batch.run()


def config_problem(config: ScorerConfig) -> str | None:
    """Return why a JavaScript config cannot score anything, or None when it can."""
    if not config.code:
        return "the JavaScript scorer has no code"
    if not _is_finite_number(config.max_score) or config.max_score <= 0:
        return "the scorer's max_score must be positive"
    return None


def encode_queries(queries: Sequence[QueryInput]) -> tuple[list[Outcome | None], list[str]]:
    """Return the queries' outcomes so far (errors for unencodable data) and the encoded rest."""
    outcomes: list[Outcome | None] = [None] * len(queries)
    parts: list[str] = []
    for index, query in enumerate(queries):
        try:
            parts.append(encode_query(query))
        except _QueryDataError as exc:
            outcomes[index] = failed(str(exc))
    return outcomes, parts


def merge(outcomes: list[Outcome | None], results: Sequence[Outcome]) -> list[Outcome]:
    """Return outcomes with its gaps filled, in order, from results."""
    rest = iter(results)
    return [outcome if outcome is not None else next(rest) for outcome in outcomes]


def score_javascript_in_process(
    config: ScorerConfig, queries: Sequence[QueryInput]
) -> list[Outcome]:
    """Return a batch's outcomes computed in this process: a V8 abort kills the caller."""
    problem = config_problem(config)
    if problem is not None:
        return [failed(problem) for _ in queries]
    outcomes, parts = encode_queries(queries)
    results = run_batch(
        config.code or "", config.scale, config.max_score, parts, environment=config.environment
    )
    return merge(outcomes, results)


_SYNTAX_LINE = re.compile(r":(\d+): (SyntaxError: [^\n]*)")


@lru_cache(maxsize=256)
def _syntax_problem(code: str) -> tuple[str, int | None] | None:
    racer = _new_racer()
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
        _close_racer(racer)
    return None


def check_javascript(code: str) -> None:
    """Raise ScorerSyntaxError (message, 1-based line) when the scorer's code does not parse."""
    problem = _syntax_problem(code)
    if problem is not None:
        raise ScorerSyntaxError(*problem)
