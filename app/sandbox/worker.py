"""A worker process: scores the batches its parent sends, one isolate per batch.

Started by the pool as ``python -c protocol.COMMAND`` (a fresh interpreter, never a fork of the
threaded parent); it exits when its stdin reaches EOF, which also happens when the parent
dies. Its memory is capped (``protocol.cap_memory``) and SIGINT is ignored: the parent
decides when it stops.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Sequence
from typing import BinaryIO

from app.sandbox import mapper
from app.sandbox.javascript import run_batch
from app.sandbox.limits import Limits
from app.sandbox.protocol import HEADER, Request, cap_memory, encode_frame
from app.sandbox.types import JsResult

__all__ = ["main", "serve"]


def serve(requests: BinaryIO, frames: BinaryIO) -> None:
    """Answer requests until the parent closes the pipe."""

    def send(done: Sequence[JsResult], step: list[float] | None) -> None:
        frames.write(encode_frame(done, step))
        frames.flush()

    while True:
        header = requests.read(HEADER.size)
        if len(header) < HEADER.size:
            return
        (size,) = HEADER.unpack(header)
        payload = requests.read(size)
        if len(payload) < size:
            return
        request: Request = pickle.loads(payload)
        if request[0] == mapper.KIND:  # a search API mapper, not a scorer batch
            mapper.serve_mapper(request, send)
            continue
        code, scale, max_score, parts, single_until, time_s, heap_bytes, in_a_row, env = request
        sent = 0

        def step(done: Sequence[JsResult], count: int, seconds: float) -> None:
            nonlocal sent
            sent += len(done)
            send(done, [sent, count, seconds])

        results = run_batch(
            code,
            scale,
            max_score,
            parts,
            limits=Limits(time_s, heap_bytes, in_a_row),
            single_until=single_until,
            step=step,
            environment=env,
        )
        send(results[sent:], None)


def main() -> None:
    """Serve the parent on stdin/stdout; stray writes to stdout go to stderr instead."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    cap_memory(os.environ)
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    with contextlib.suppress(BrokenPipeError):
        serve(sys.stdin.buffer, frames)


if __name__ == "__main__":
    main()
