"""The JavaScript that sets up an isolate for Quepid-compatible scorers (prelude.js).

``prelude.js`` is package data, a function evaluated once per isolate as
``(prelude)(globalThis, token, sliceMs, constants)``. It takes timers away, freezes every
intrinsic it reaches, makes the global bindings read-only and installs one frozen entry
object, ``__relevo``, whose methods need the per-isolate token, so the user's code cannot
drive it. The user's code is the body of a function whose parameters are the helpers.

Each query sees what a fresh isolate shows. Once per isolate, after the prelude,
``isolate`` freezes what is left open: ``__relevo``'s methods, the intrinsics only
instances reach, and the global object's prototype (the global object then inherits from
``Object.prototype``). Before each query the prelude deletes the globals the previous one
made; then it calls the runner, a strict-mode function (``isolate``) that rebuilds the
user's function with ``new Function`` (a fresh function object and prototype every query),
clears RegExp's legacy statics and freezes the helpers that only its arguments reach. A
global that could not be deleted, a non-extensible global object or another prototype
cannot be undone in place: the runner refuses the query and the batch runs it, and the rest,
in a fresh isolate.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

# Names the scorer body sees as parameters, in the order the runner passes them.
PARAMS: tuple[str, ...] = (
    "docs", "bestDocs", "total", "max", "scale", "console",
    "numFound", "numReturned", "docAt", "docExistsAt", "hasDocRating", "docRating",
    "avgRating", "avgRating100", "editDistanceFromBest", "eachDoc", "eachDocWithRating",
    "eachDocWithRatingEqualTo", "topRatings", "qOption", "ratedDocAt", "ratedDocExistsAt",
    "eachRatedDoc", "setScore", "pass", "fail", "assert", "assertOrScore",
    "query", "options", "recordDepthOfRanking", "refreshRatedDocs",
)  # fmt: skip

SOURCE_URL = "relevo-scorer.js"
# new Function puts "(function anonymous(<params>\n) {\n" before the body, and the body
# starts with our "{\n": the user's line 1 is line 4 of the compiled source.
LINE_OFFSET = 3
MAX_LOG_LINES = 200
MAX_LOG_CHARS = 2000
MAX_QUERY_LOG_CHARS = 16 * 1024  # what one query's console output may store, all lines together


def function_body(code: str) -> str:
    """Return the body passed to new Function: the user's code in a block of its own."""
    # The block lets `let max = ...` shadow a helper instead of clashing with the parameter.
    return "{\n" + code + "\n}\n//# sourceURL=" + SOURCE_URL


@functools.cache
def prelude_source() -> str:
    """Return prelude.js, the function that sets up an isolate."""
    package = __name__.rpartition(".")[0]  # prelude.js lies beside this module
    return resources.files(package).joinpath("prelude.js").read_text(encoding="utf-8")


@functools.cache
def prelude_constants() -> str:
    """Return the constants prelude.js takes, as a JavaScript object literal."""
    return json.dumps(
        {
            "PARAMS": list(PARAMS),
            "LINE_OFFSET": LINE_OFFSET,
            "SOURCE_URL": SOURCE_URL,
            "MAX_LOG_LINES": MAX_LOG_LINES,
            "MAX_LOG_CHARS": MAX_LOG_CHARS,
            "MAX_QUERY_LOG_CHARS": MAX_QUERY_LOG_CHARS,
        }
    )
