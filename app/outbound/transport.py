"""The HTTP client that runs use for engines: several small connection pools, not one big one.

httpcore's pool walks all its connections (and asks each idle one's socket whether the
server closed it) every time a request starts or ends, so its cost per request grows with
the number of connections, quadratically in one of its checks. A worker with 32 requests
in flight spent a fifth of its event loop there. ``SpreadTransport`` keeps the same total
limits but spreads requests over several pools, each request going to the pool with the
fewest requests under way, so every walk is over a handful of connections. The pools
reach the network through asyncio's streams rather than anyio (``app.outbound.network``),
which takes a third less CPU per request.

Every outbound call (engine runs and tries, connection tests, judges, webhooks) goes
through ``engine_http_client``: direct connections are made by those pools, which connect
only to addresses the outbound policy allows, resolved once for the check and the
connection (``app.outbound.network``). With a proxy set in the environment (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY``, read as httpx reads them), a request to a host that
``NO_PROXY`` does not exempt goes to the proxy after its destination has passed the
policy (``ProxiedTransport``); the proxy resolves and connects, so that check is the one
that applies. A host ``NO_PROXY`` exempts is connected to directly, through the pools.
"""

from __future__ import annotations

import functools
import math
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpcore
import httpx
from httpx._utils import get_environment_proxies

from app.outbound.network import StreamBackend
from app.outbound.policy import check_destination, current_policy

__all__ = [
    "CLIENT_LIMITS",
    "POOLS",
    "ProxiedTransport",
    "SpreadTransport",
    "engine_http_client",
]

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
        tls = _tls_context()
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


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """Return the TLS settings of every outbound client: loading the CA bundle is slow, so
    it is done once per process, not per client (a try or a connection test makes one)."""
    return httpx.create_ssl_context()


class ProxiedTransport(httpx.AsyncBaseTransport):
    """Sends requests through an HTTP proxy, each destination checked by the policy first."""

    def __init__(self, proxy: str, *, limits: httpx.Limits = CLIENT_LIMITS) -> None:
        # The proxy itself is the operator's choice: its own address is not checked.
        self._transport = httpx.AsyncHTTPTransport(
            proxy=proxy, limits=limits, verify=_tls_context()
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check the request's destination against the policy, then send it to the proxy."""
        url = request.url
        where = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"
        await check_destination(current_policy(), url, where)
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the connections to the proxy."""
        await self._transport.aclose()


def _proxy_mounts(limits: httpx.Limits) -> dict[str, httpx.AsyncBaseTransport | None]:
    """Return the environment's proxies as httpx mounts: a checked proxy for the URL patterns
    a proxy serves, None (the direct, guarded pools) for those NO_PROXY exempts."""
    return {
        pattern: None if proxy is None else ProxiedTransport(proxy, limits=limits)
        for pattern, proxy in get_environment_proxies().items()
    }


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
    """Return the client every outbound call is sent with (guarded; no redirects followed)."""
    return httpx.AsyncClient(
        transport=SpreadTransport(limits=limits),
        mounts=_proxy_mounts(limits),
        follow_redirects=False,
    )
