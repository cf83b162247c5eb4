"""Search API mappers: a user's ``docsMapper(data)`` run in a sandbox worker process.

A mapper request travels through the same worker processes as scorer batches and under the
scorer sandbox's limits (time per eval, V8 heap, the worker's memory cap, the watchdog that
kills a silent worker). It is a pickled tuple ``(KIND, code, raw, is_json, time_s,
heap_bytes)``; the worker answers in the scorer protocol's frames: one announcing the eval
(so the parent's watchdog waits at most its time limit plus grace), then one holding a
single result row whose ``reason`` is the JSON result (status "scored") or the error
message (status "error").
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException

from app.sandbox import pool as pool_module
from app.sandbox.limits import Limits
from app.sandbox.process import WorkerLost
from app.sandbox.types import JsResult, js_error
from app.sandbox.v8 import close_racer, new_racer
from app.vocabulary import QueryStatus

__all__ = ["KIND", "Mapped", "MapperError", "run_mapper", "serve_mapper"]

KIND = "relevo-mapper"
_SETUP_S = 10.0

# Runs the user's functions on the answer; JSON.stringify keeps the result plain data.
_CALL = """(function (raw, isJson) {
  if (typeof docsMapper !== "function") {
    throw new Error("the mapper code defines no docsMapper(data) function");
  }
  const data = isJson ? JSON.parse(raw) : raw;
  const docs = docsMapper(data);
  const count = typeof numberOfResultsMapper === "function" ? numberOfResultsMapper(data) : null;
  return JSON.stringify({
    docs: docs === undefined ? null : docs,
    count: count === undefined ? null : count,
  });
})(%s, %s)"""


class MapperError(Exception):
    """The mapper failed: it threw, overran a limit, or returned something unusable."""


@dataclass(frozen=True)
class Mapped:
    """What a mapper made of an answer: docs with string ids, and the total."""

    docs: list[dict[str, Any]]
    num_found: int


def _evaluate(code: str, raw: str, is_json: bool, time_s: float, heap_bytes: int) -> str:
    racer = new_racer()  # on the process's V8 thread, as the scorers' contexts
    try:
        racer.set_hard_memory_limit(heap_bytes)
        racer.eval("delete globalThis.WebAssembly", timeout_sec=_SETUP_S)
        racer.eval(code, timeout_sec=time_s)
        out = racer.eval(
            _CALL % (json.dumps(raw), "true" if is_json else "false"), timeout_sec=time_s
        )
    finally:
        close_racer(racer)
    if not isinstance(out, str):
        raise MapperError("the mapper returned nothing usable")
    return out


def _answer(request: tuple[Any, ...]) -> JsResult:
    _kind, code, raw, is_json, time_s, heap_bytes = request
    try:
        result = _evaluate(code, raw, is_json, float(time_s), int(heap_bytes))
    except JSTimeoutException:
        return js_error(f"mapper exceeded its {time_s:g} s time limit")
    except JSOOMException:
        return js_error(f"mapper exceeded its memory limit ({heap_bytes / 2**20:g} MiB)")
    except JSEvalException as exc:
        return js_error(f"mapper failed: {str(exc).strip()[:500]}")
    except MapperError as exc:
        return js_error(str(exc))
    return JsResult(QueryStatus.SCORED, None, None, result)


def serve_mapper(
    request: tuple[Any, ...], send: Callable[[Sequence[JsResult], list[float] | None], None]
) -> None:
    """In a worker: answer one mapper request with an announcing frame and a result frame."""
    # Two evals (the code, then the call) may each take the time limit, plus setup.
    send([], [0, 1, 2 * float(request[4]) + _SETUP_S])
    send([_answer(request)], None)


def _docs(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise MapperError("docsMapper(data) must return an array of docs")
    docs = []
    for number, doc in enumerate(value, start=1):
        if not isinstance(doc, dict):
            raise MapperError(f"doc {number} from docsMapper is not an object")
        ident = doc.get("id")
        if ident is None or ident == "" or isinstance(ident, dict | list | bool):
            raise MapperError(f"doc {number} from docsMapper has no id")
        if isinstance(ident, float) and ident.is_integer():
            ident = int(ident)
        docs.append({**doc, "id": str(ident)})
    return docs


def _count(value: Any, docs: list[dict[str, Any]]) -> int:
    if value is None:
        return len(docs)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MapperError("numberOfResultsMapper(data) must return a number")
    return int(value)


def run_mapper(
    code: str,
    raw: str,
    *,
    is_json: bool,
    limits: Limits | None = None,
    owner: object = None,
) -> Mapped:
    """Return the docs and total the mapper makes of an answer; raise MapperError.

    Blocking: call it from a thread. Uses the installed pool (else one of its own).
    """
    limits = limits or Limits()
    request = (KIND, code, raw, is_json, limits.time_s, limits.heap_bytes)
    installed = pool_module.current_pool()
    pool = installed or pool_module.JsPool()
    try:
        rows = _through(pool, pickle.dumps(request, pickle.HIGHEST_PROTOCOL), owner, limits)
    finally:
        if installed is None:
            pool.close()
    if not rows:
        raise MapperError("the mapper gave no answer")
    answer = rows[-1]
    if answer.status != "scored":
        raise MapperError(answer.reason or "mapper failed")
    try:
        result = json.loads(answer.reason or "")
    except ValueError as exc:
        raise MapperError("the mapper returned something that is not JSON") from exc
    except RecursionError:
        raise MapperError("the mapper returned docs nested too deeply to read") from None
    if not isinstance(result, dict):
        raise MapperError("the mapper returned nothing usable")
    docs = _docs(result.get("docs"))
    return Mapped(docs=docs, num_found=_count(result.get("count"), docs))


def _through(
    pool: pool_module.JsPool, request: bytes, owner: object, limits: Limits
) -> list[JsResult]:
    rows: list[JsResult] = []
    worker = pool._acquire(owner)  # a mapper holds a worker as a batch does
    try:
        worker.run(request, rows.extend)
    except WorkerLost as lost:
        if lost.step is None:
            raise MapperError("the JavaScript worker process could not start") from lost
        if lost.stalled:
            raise MapperError(f"mapper exceeded its {limits.time_s:g} s time limit") from lost
        raise MapperError("mapper crashed the JavaScript engine (out of memory)") from lost
    finally:
        pool._release(worker, owner)
    return rows
