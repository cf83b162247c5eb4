"""An engine's answer, read whole: turned into a search result, or into the error it reports.

Large answers are parsed off the event loop. JSON that orjson refuses is read by the
standard library; NUL and lone surrogates, which PostgreSQL cannot store, become U+FFFD. A
search API answer goes to the endpoint's mapper.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from app.search.elastic import es_error_message, parse_es_response
from app.search.errors import EngineError, EngineHTTPError, EngineResponseError, EngineUnavailable
from app.search.fieldspec import FieldSpec
from app.search.models import EndpointConfig, SearchResult
from app.search.searchapi import map_answer
from app.search.solr import parse_solr_response, solr_error_message
from app.search.vespa import parse_vespa_response, vespa_error_message
from app.vocabulary import Engine

__all__ = ["INLINE_PARSE_BYTES", "RETRY_STATUSES", "Answer", "http_error", "parse_answer"]

RETRY_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class Answer:
    """An engine's answer, read whole (up to the size cap) before the timeout ran out."""

    status_code: int
    reason_phrase: str
    content: bytes


_TOO_DEEP = object()


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
            return _TOO_DEEP
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


async def _json(answer: Answer) -> Any:
    # Large answers cost real CPU: keep them off the event loop.
    if len(answer.content) <= INLINE_PARSE_BYTES:
        return _load(answer.content)
    return await asyncio.to_thread(_load, answer.content)


def _snippet(answer: Answer) -> str:
    text = " ".join(answer.content[:2000].decode("utf-8", "replace").split())
    return text[:200] + ("…" if len(text) > 200 else "")


async def http_error(endpoint: EndpointConfig, answer: Answer) -> EngineError:
    body = await _json(answer)
    extract = _ERROR_MESSAGES.get(endpoint.engine, es_error_message)
    detail = (extract(body) if isinstance(body, dict) else None) or _snippet(answer)
    detail = (detail or answer.reason_phrase)[:300]
    message = f"HTTP {answer.status_code} from {endpoint.safe_url}: {detail}"
    if answer.status_code in RETRY_STATUSES:
        return EngineUnavailable(message)
    return EngineHTTPError(message, status_code=answer.status_code)


_ERROR_MESSAGES: dict[str, Callable[[Any], str | None]] = {
    Engine.SOLR: solr_error_message,
    Engine.VESPA: vespa_error_message,
    Engine.SEARCHAPI: lambda body: None,  # an unknown service: its answer's start says most
}


async def parse_answer(
    endpoint: EndpointConfig, answer: Answer, spec: FieldSpec, explain: bool, rows: int = 10
) -> SearchResult:
    body = await _json(answer)
    if endpoint.engine == Engine.SEARCHAPI:
        text = answer.content.decode("utf-8", "replace")
        usable = body if body is not None and body is not _TOO_DEEP else None
        return await map_answer(
            endpoint.mapper_code or "", usable, text, rows, owner=endpoint.sandbox_owner
        )
    if body is _TOO_DEEP:
        raise EngineResponseError(f"the answer from {endpoint.safe_url} is nested too deeply")
    if body is None:
        raise EngineResponseError(
            f"response from {endpoint.safe_url} is not JSON: {_snippet(answer)!r}"
        )
    if endpoint.engine == Engine.SOLR:
        return parse_solr_response(body, spec, explain=explain)
    if endpoint.engine == Engine.VESPA:
        return parse_vespa_response(body, spec, explain=explain)
    return parse_es_response(body, spec)
