"""Runs Quepid-compatible JavaScript scorers in a V8 isolate (mini-racer).

This is the engine; it runs in whatever process calls it, and a few huge allocations make V8
abort that whole process. Relevo therefore calls it only inside the worker process of
``app.sandbox``; ``check_javascript`` stays here because it only compiles the code
(``new Function``), it never runs it.

One isolate serves a whole batch. Queries are sent in chunks and run in "slices": one eval
runs queries until ``JS_SLICE_S`` has passed, so the eval overhead (~0.2 ms) is paid per
slice, not per query. A slice's eval may last ``JS_TIME_LIMIT_S + JS_SLICE_S``; since a
query only starts within the first ``JS_SLICE_S``, each query gets at least its full time
limit, and a slice that times out was stopped inside a query that overran it.

Before each eval the batch calls its optional ``step`` hook with the outcomes finished since
the previous call, how many queries the eval may touch (0: none in particular) and how long
it may take, so that a supervising process knows which queries a crash can be blamed on.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
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
from app.scoring.prelude import LINE_OFFSET, PARAMS, function_body, prelude_source
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


class _Isolate:
    """One V8 isolate with the prelude installed and the user's code compiled."""

    SETUP_S = 2 * _SETUP_TIMEOUT_S  # the longest __init__ may take: two evals

    def __init__(
        self, code: str, scale: Sequence[float], heap_limit: int, environment: str = "relevo"
    ) -> None:
        self._racer = MiniRacer()
        self._token = json.dumps(secrets.token_hex(16))
        try:
            self._racer.set_hard_memory_limit(heap_limit)
            slice_ms = max(1, round(JS_SLICE_S * 1000))
            # No WebAssembly: its memories and compilers are a way around the heap limit.
            self._racer.eval("delete globalThis.WebAssembly", timeout_sec=_SETUP_TIMEOUT_S)
            setup = f"({prelude_source()})(globalThis, {self._token}, {slice_ms})"
            self._racer.eval(setup, timeout_sec=_SETUP_TIMEOUT_S)
            body, scale_json = json.dumps(function_body(code)), json.dumps(json.dumps(list(scale)))
            env = json.dumps(environment)
            error = self._eval(f"__relevo.setup({self._token}, {body}, {scale_json}, {env})")
        except BaseException:
            self.close()
            raise
        self.compile_error = error if isinstance(error, str) else None

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
        self._racer.close()


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

    def _store(self, items: Sequence[Sequence[Any]]) -> None:
        for item in items:
            self.outcomes[self.pos] = _to_outcome(item, self.max_score)
            self.pos += 1
            self.timeouts_in_a_row = 0

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
        self._store(items)
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
            self._store(items)
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
    racer = MiniRacer()
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
        racer.close()
    return None


def check_javascript(code: str) -> None:
    """Raise ScorerSyntaxError (message, 1-based line) when the scorer's code does not parse."""
    problem = _syntax_problem(code)
    if problem is not None:
        raise ScorerSyntaxError(*problem)
