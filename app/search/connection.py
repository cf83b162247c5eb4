"""Test an endpoint with one real query and report the outcome in plain words."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from app.search.client import SearchClient
from app.search.errors import SearchError
from app.search.types import Doc, EndpointConfig, SearchRequest

__all__ = ["ConnectionReport", "try_connection"]


@dataclass(frozen=True)
class ConnectionReport:
    """The outcome of a connection test."""

    ok: bool
    num_found: int | None
    sample: Doc | None
    message: str
    duration_ms: float


async def try_connection(
    http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
) -> ConnectionReport:
    """Return the outcome of one query against ``endpoint``; never raises for engine problems."""
    client = SearchClient(http, attempts=1)
    started = time.perf_counter()
    try:
        result = await client.search(endpoint, request)
    except SearchError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        return ConnectionReport(False, None, None, exc.message, elapsed)
    elapsed = (time.perf_counter() - started) * 1000
    sample = result.docs[0] if result.docs else None
    if sample is None:
        message = f"Connected to {endpoint.safe_url}, but the query found no documents."
    else:
        message = f"Connected to {endpoint.safe_url}: {result.num_found} documents found."
    return ConnectionReport(True, result.num_found, sample, message, elapsed)
