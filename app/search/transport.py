"""The HTTP client that runs use for engines: several small connection pools, not one big one.

httpcore's pool walks all its connections (and asks each idle one's socket whether the
server closed it) every time a request starts or ends, so its cost per request grows with
the number of connections, quadratically in one of its checks. A worker with 32 requests
in flight spent a fifth of its event loop there. ``SpreadTransport`` keeps the same total
limits but spreads requests over several pools, each request going to the pool with the
fewest requests under way, so every walk is over a handful of connections. The pools
reach the network through asyncio's streams rather than anyio (``app.search.network``),
which takes a third less CPU per request.

With a proxy set in the environment (``HTTP_PROXY`` and the like), the client is httpx's
own, which honours it.
"""

from __future__ import annotations

import math
import ssl
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import httpcore
import httpx

from app.search.network import StreamBackend

__all__ = ["CLIENT_LIMITS", "POOLS", "SpreadTransport", "engine_http_client"]

CLIENT_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)
POOLS = 8


class SpreadTransport(httpx.AsyncBaseTransport):
    """Sends each request through the least busy of ``pools`` connection pools."""

    def __init__(self, *, limits: httpx.Limits = CLIENT_LIMITS, pools: int = POOLS) -> None:
        def share(total: int | None) -> int | None:
            return None if total is None else max(1, math.ceil(total / pools))

        each = httpx.Limits(
            max_connections=share(limits.max_connections),
            max_keepalive_connections=share(limits.max_keepalive_connections),
            keepalive_expiry=limits.keepalive_expiry,
        )
        tls = httpx.create_ssl_context()  # loading the CA bundle is slow: once for all pools
        self._pools = [_stream_transport(each, tls) for _ in range(max(1, pools))]
        self._busy = [0] * len(self._pools)

    @property
    def busy(self) -> list[int]:
        """How many requests each pool has under way (a response counts until closed)."""
        return list(self._busy)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request through the pool with the fewest requests under way."""
        index = min(range(len(self._pools)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            response = await self._pools[index].handle_async_request(request)
        except BaseException:
            self._busy[index] -= 1
            raise
        response.stream = _Counted(response.stream, self._busy, index)
        return response

    async def aclose(self) -> None:
        """Close every pool's connections."""
        for pool in self._pools:
            await pool.aclose()


def _stream_transport(limits: httpx.Limits, tls: ssl.SSLContext) -> httpx.AsyncHTTPTransport:
    """Return httpx's transport over a connection pool on asyncio streams (``network``)."""
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=tls)
    # httpx takes no network backend, so its pool is replaced by the same pool on ours
    # (the arguments httpx passes for a transport without proxy; a test checks the swap).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=tls,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=StreamBackend(),
    )
    return transport


class _Counted(httpx.AsyncByteStream):
    """A response body that marks its pool one request less busy once it is closed."""

    def __init__(self, stream: Any, busy: list[int], index: int) -> None:
        self._stream = stream
        self._busy = busy
        self._index = index
        self._open = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            if self._open:
                self._open = False
                self._busy[self._index] -= 1


def engine_http_client(*, limits: httpx.Limits = CLIENT_LIMITS) -> httpx.AsyncClient:
    """Return the client that runs send engine requests with (no redirects followed)."""
    if urllib.request.getproxies():  # httpx applies the environment's proxies to its own
        return httpx.AsyncClient(limits=limits, follow_redirects=False)
    return httpx.AsyncClient(transport=SpreadTransport(limits=limits), follow_redirects=False)
