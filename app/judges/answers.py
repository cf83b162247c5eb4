"""Reading a judge's HTTP answer: retry, fail the pair with the reason, or its JSON body.

A 429 waits as long as ``Retry-After`` (seconds or a date) or ``retry-after-ms`` says; 5xx
answers are retried; a redirect is not followed (so the key never leaves the judge's host);
anything else fails that pair with the provider's own error message.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from app.outbound.retry import GaveUp, Retry

__all__ = ["RETRY_STATUSES", "Failed", "error_text", "gave_up_reason", "read_answer", "retry_after"]

RETRY_STATUSES = frozenset({500, 502, 503, 504, 529})


class Failed(Exception):
    """This pair fails with the reason; no retry."""


def read_answer(
    status: int,
    headers: httpx.Headers,
    content: bytes,
    where: str,
    fallback_wait: Callable[[], float],
) -> Any:
    """Return the answer's JSON body; raise ``Retry`` or ``Failed`` for any other answer."""
    if status == 429:
        raise Retry(f"HTTP 429 from {where}", wait_s=retry_after(headers, fallback_wait()))
    if status in RETRY_STATUSES:
        raise Retry(f"HTTP {status} from {where}: {error_text(content)}")
    if 300 <= status < 400:
        raise Failed(
            f"{where} answered with a redirect (HTTP {status}); redirects are not followed, "
            "so the key never leaves the judge's host: set base_url to the final address"
        )
    if status >= 400:
        raise Failed(f"HTTP {status} from {where}: {error_text(content)}")
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        raise Failed(f"the answer from {where} is not JSON: {error_text(content)}") from None


def gave_up_reason(gave_up: GaveUp, timeout_s: float) -> str:
    """Why a pair failed when no try was left."""
    last = gave_up.last
    if gave_up.why == "throttled":
        return f"{last.reason}, {gave_up.throttled} times"
    if gave_up.why == "patience":
        return (
            f"{last.reason} asking to wait {last.wait_s:g} s, longer than the "
            f"judge's timeout_s ({timeout_s:g} s) leaves"
        )
    return f"{last.reason} (after {gave_up.failures} attempts)"


def retry_after(headers: httpx.Headers, fallback: float) -> float:
    """Return how long a 429 asks to wait: retry-after-ms, Retry-After seconds or date."""
    millis = _seconds(headers.get("retry-after-ms", ""), scale=1000)
    if millis is not None:
        return millis
    value = headers.get("retry-after", "").strip()
    if not value:
        return fallback
    seconds = _seconds(value, scale=1)
    if seconds is not None:
        return seconds
    return _until_date(value, fallback)


def _seconds(value: str, *, scale: float) -> float | None:
    """Return a header's number as seconds (never negative), or None when it is not one."""
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value) / scale)
    except ValueError:
        return None


def _until_date(value: str, fallback: float) -> float:
    """Return the seconds until an HTTP date, or ``fallback`` when it is not one."""
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return fallback
    return max(0.0, when.timestamp() - time.time())


def error_text(content: bytes) -> str:
    """Return the provider's error message (OpenAI and Anthropic put it in error.message)."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if isinstance(message, str):
            return message[:300]
    text = " ".join(content[:1000].decode("utf-8", "replace").split())
    return text[:200] or "(empty answer)"
