"""An engine's answer, read whole: turned into a search result, or into the error it reports.

Large answers are parsed off the event loop. JSON that orjson refuses is read by the
standard library; NUL and lone surrogates, which PostgreSQL cannot store, become U+FFFD. A
search API answer goes to the endpoint's mapper.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from app.search.errors import EngineResponseError
from app.search.types import EndpointConfig

__all__ = [
    "INLINE_PARSE_BYTES",
    "RETRY_STATUSES",
    "TOO_DEEP",
    "Answer",
    "json_body",
    "read_json",
    "snippet",
]

RETRY_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class Answer:
    """An engine's answer, read whole (up to the size cap) before the timeout ran out."""

    status_code: int
    reason_phrase: str
    content: bytes


TOO_DEEP = object()  # what read_json returns for JSON nested too deeply to read


# NUL and unpaired surrogates cannot be stored (PostgreSQL refuses them in text and JSON).
_UNSTORABLE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89abcdefABCDEF])|\x00")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _load(content: bytes) -> Any:
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        # What orjson refuses, the standard library may still read (NaN, integers beyond 64
        # bits, lone surrogates); it also tells nesting too deep from text that is not JSON.
        try:
            body = json.loads(content)
        except ValueError:
            return None
        except RecursionError:
            return TOO_DEEP
    # Substring checks first: they cost a fraction of the pattern's scan of a whole answer.
    if (b"\\u" in content or b"\x00" in content) and _UNSTORABLE_ESCAPE.search(content):
        body = _storable(body)
    return body


def _storable(value: Any) -> Any:
    """Return ``value`` with NUL and lone surrogates replaced by U+FFFD, keys included."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    return value


# Answers up to this size are parsed on the event loop: orjson takes microseconds for them,
# less than the hop to a thread would.
INLINE_PARSE_BYTES = 256 * 1024


async def read_json(answer: Answer) -> Any:
    """Return the answer's JSON (None: not JSON; ``TOO_DEEP``: nested too deeply).

    Large answers cost real CPU: they are parsed off the event loop.
    """
    if len(answer.content) <= INLINE_PARSE_BYTES:
        return _load(answer.content)
    return await asyncio.to_thread(_load, answer.content)


def snippet(answer: Answer) -> str:
    """The start of the answer's text, on one line, for an error message."""
    text = " ".join(answer.content[:2000].decode("utf-8", "replace").split())
    return text[:200] + ("…" if len(text) > 200 else "")


async def json_body(endpoint: EndpointConfig, answer: Answer) -> Any:
    """Return the answer's JSON; EngineResponseError when it is not JSON or nested too deeply."""
    body = await read_json(answer)
    if body is TOO_DEEP:
        raise EngineResponseError(f"the answer from {endpoint.safe_url} is nested too deeply")
    if body is None:
        raise EngineResponseError(
            f"response from {endpoint.safe_url} is not JSON: {snippet(answer)!r}"
        )
    return body
