"""One V8 isolate set up for a scorer: the prelude, the lockdown and the per-query runner.

Each query starts from the state a fresh isolate would give it. The prelude deletes the
globals the previous query made; on top of that the isolate is locked further once
(``_LOCKDOWN``: the prelude's own objects, the global object's prototype, the intrinsics only
instances reach) and the function the prelude calls per query is ``_RUNNER``, which compiles
the user's code into a new function for every query (V8's compilation cache makes that
cheap), so nothing hangs off the function object or its prototype, and clears RegExp's
legacy match state. A global the prelude could not delete, or a global object made
non-extensible or given another prototype, cannot be undone in place: ``_RUNNER`` then
refuses to run the query (``Isolate.refusal``) and the batch reruns it, and the rest, in a
new isolate.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from app.sandbox.limits import JS_SLICE_S, SETUP_TIMEOUT_S
from app.sandbox.prelude import PARAMS, function_body, prelude_constants, prelude_source
from app.sandbox.v8 import close_racer, new_racer

__all__ = ["Isolate"]


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


class Isolate:
    """One V8 isolate with the prelude installed and the user's code compiled."""

    # The longest __init__ may take: the evals that can be slow (the prelude, the lockdown
    # and two compiles of the user's code).
    SETUP_S = 4 * SETUP_TIMEOUT_S

    def __init__(
        self, code: str, scale: Sequence[float], heap_limit: int, environment: str = "relevo"
    ) -> None:
        self._racer = new_racer()
        self._token = json.dumps(secrets.token_hex(16))
        # The message _RUNNER throws when it refuses to run a query; unguessable by the scorer.
        marker = "relevo-restart-" + secrets.token_hex(16)
        self.refusal = "Error: " + marker  # what the prelude reports for that query
        self.scored = 0  # queries whose outcome this isolate gave
        try:
            self._racer.set_hard_memory_limit(heap_limit)
            slice_ms = max(1, round(JS_SLICE_S * 1000))
            # No WebAssembly: its memories and compilers are a way around the heap limit.
            self._racer.eval("delete globalThis.WebAssembly", timeout_sec=SETUP_TIMEOUT_S)
            constants = prelude_constants()
            setup = f"({prelude_source()})(globalThis, {self._token}, {slice_ms}, {constants})"
            self._racer.eval(setup, timeout_sec=SETUP_TIMEOUT_S)
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

    def _eval(self, expression: str, timeout: float = SETUP_TIMEOUT_S) -> Any:
        return self._racer.eval(expression, timeout_sec=timeout)

    def load(self, parts: Sequence[str]) -> None:
        """Hand the isolate a chunk of encoded queries."""
        data = json.dumps("[" + ",".join(parts) + "]")
        self._eval(f"__relevo.load({self._token}, {data})")

    def run(self, max_count: int, timeout: float) -> tuple[list[list[Any]], bool]:
        """Run one slice; return its queries' results and whether a global stayed behind."""
        out = self._eval(f"__relevo.run({self._token}, {max_count})", timeout)
        result = json.loads(out)
        return result["r"], bool(result["t"])

    def interrupted(self) -> tuple[list[list[Any]], bool, list[str]]:
        """After a stopped slice: its finished results, whether a query ran, that one's logs."""
        result = json.loads(self._eval(f"__relevo.interrupted({self._token})"))
        return result["r"], bool(result["running"]), list(result["logs"])

    def close(self) -> None:
        """Close the isolate's V8 context."""
        close_racer(self._racer)
