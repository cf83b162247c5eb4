"""What the parent and a worker process say to each other, and what a worker inherits.

Parent to worker: one request per batch, an 8-byte length then a pickle of (code, scale,
max_score, encoded queries, how many of the first ones to run one per eval, time limit, heap
limit, time-outs in a row before stopping, environment). Worker to parent: frames of the
same shape holding JSON (not pickle: the worker runs untrusted code, the parent does not
unpickle what it sends) of ``[results, step]``. The worker sends one frame before each eval
with the results finished since the previous frame and ``step = [first unfinished query,
how many queries the eval may touch (0: none in particular), its longest duration]``, and a
last frame with ``step = null``. Limits travel with each request.
"""

from __future__ import annotations

import json
import resource
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.sandbox.types import JsResult

__all__ = [
    "COMMAND",
    "HEADER",
    "MAX_FRAME",
    "MEMORY_ENV",
    "Request",
    "cap_memory",
    "encode_frame",
    "result_from_row",
    "row_of",
    "worker_environment",
]

# How the pool starts a worker: ``python -c COMMAND`` (a fresh interpreter). Not "-m
# <this package>.worker": the package would import that module, which would then run twice.
# Both the command and the root are derived from this module's name, wherever it lives.
COMMAND = f"from {__name__.rpartition('.')[0]}.worker import main; main()"
HEADER = struct.Struct("<Q")
MAX_FRAME = 1 << 31
ROOT = str(Path(__file__).resolve().parents[__name__.count(".")])  # holds the top package
STATUSES = frozenset(("scored", "unscored", "error"))

Request = tuple[str, tuple[float, ...], float, list[str], int, float, int, int, str]

# What a worker inherits of the parent's environment: nothing secret (no DATABASE_URL, no
# RELEVO_SECRET_KEY, no cloud credentials), only what an interpreter needs to start.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
MEMORY_ENV = "RELEVO_JS_WORKER_MEMORY_BYTES"


def worker_environment(parent: Mapping[str, str], memory_bytes: int) -> dict[str, str]:
    """Return the environment of a worker process, built from the parent's."""
    env = {name: parent[name] for name in INHERITED if name in parent}
    env["PYTHONPATH"] = ROOT
    env[MEMORY_ENV] = str(memory_bytes)
    return env


def cap_memory(environ: Mapping[str, str]) -> None:
    """In the worker: cap the process's data segment (RLIMIT_DATA) as the parent asked."""
    raw = environ.get(MEMORY_ENV, "")
    if raw.isdigit():
        limit = int(raw)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def encode_frame(done: Sequence[JsResult], step: list[Any] | None) -> bytes:
    """Return one worker-to-parent frame: the results finished since the last one, and the step."""
    data = json.dumps([[row_of(o) for o in done], step], separators=(",", ":")).encode()
    return HEADER.pack(len(data)) + data


def result_from_row(row: Any) -> JsResult:
    """Return the result a worker sent, checking its shape (the worker is not trusted)."""
    status, score, raw, reason, log = row
    ok = (
        status in STATUSES
        and (score is None or type(score) in (float, int))
        and (raw is None or type(raw) in (float, int))
        and (reason is None or type(reason) is str)
        and type(log) is list
        and all(type(line) is str for line in log)
    )
    if not ok:
        raise ValueError("malformed result")
    return JsResult(status, score, raw, reason, tuple(log))


def row_of(result: JsResult) -> list[Any]:
    """Return a result as the list a frame carries."""
    return [result.status, result.score, result.raw_score, result.reason, list(result.log)]
