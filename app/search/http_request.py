"""The parts every engine's httpx request is made of (each engine's adapter makes its own).

Builders only: auth is added when the client sends the request.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from app.search.types import EndpointConfig

__all__ = [
    "FORM",
    "base_url",
    "headers_of",
    "json_bytes",
    "json_post",
    "params_request",
    "suffixed_url",
    "timeout_of",
    "unsuffixed_url",
]

FORM = "application/x-www-form-urlencoded"


# Parsing URLs costs more than rendering a query; a run reuses a handful.
@functools.lru_cache(maxsize=256)
def base_url(url: str) -> httpx.URL:
    """The endpoint's URL, parsed once."""
    return httpx.URL(url)


@functools.lru_cache(maxsize=256)
def suffixed_url(url: str, suffix: str) -> httpx.URL:
    """The endpoint's URL with ``suffix`` ending its path (its query kept), parsed once."""
    base = base_url(url)
    return base.copy_with(path=base.path.rstrip("/") + suffix)


def unsuffixed_url(url: str, suffix: str) -> str:
    """The URL without ``suffix`` ending its path (a trailing slash aside, its query kept);
    a URL whose path does not end so is returned as it is."""
    parsed = httpx.URL(url)
    path = parsed.raw_path.decode("ascii").partition("?")[0].rstrip("/")
    if not path.endswith(suffix):
        return url
    query = parsed.query.decode("ascii")
    raw_path = path[: -len(suffix)] + (f"?{query}" if query else "")
    return str(parsed.copy_with(raw_path=raw_path.encode()))


def headers_of(endpoint: EndpointConfig, accept: str = "application/json") -> dict[str, str]:
    """The request's headers: what it accepts, then the endpoint's own."""
    return {"Accept": accept, **endpoint.headers}


def timeout_of(endpoint: EndpointConfig) -> httpx.Timeout:
    return httpx.Timeout(endpoint.timeout_s)


def json_bytes(body: Any) -> bytes:
    """The body as JSON bytes."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # an integer beyond 64 bits in the options, say
        return json.dumps(body).encode()


def json_post(
    http: httpx.AsyncClient,
    endpoint: EndpointConfig,
    url: httpx.URL,
    body: Any,
    headers: dict[str, str],
) -> httpx.Request:
    """A POST of a JSON body."""
    return http.build_request(
        "POST",
        url,
        content=json_bytes(body),
        headers={"Content-Type": "application/json", **headers},
        timeout=timeout_of(endpoint),
    )


def params_request(
    http: httpx.AsyncClient,
    endpoint: EndpointConfig,
    params: Sequence[tuple[str, str]],
    headers: dict[str, str],
) -> httpx.Request:
    """A GET with these query parameters, or a POST of them as a form (``endpoint.method``)."""
    timeout = timeout_of(endpoint)
    url = base_url(endpoint.url)
    if endpoint.method == "POST":
        form = str(httpx.QueryParams(tuple(params)))
        headers = {**headers, "Content-Type": FORM}
        return http.build_request("POST", url, content=form, headers=headers, timeout=timeout)
    full = url.copy_merge_params(tuple(params))
    return http.build_request("GET", full, headers=headers, timeout=timeout)
