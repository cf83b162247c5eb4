"""httpcore's network layer on asyncio streams, for the engine connection pools.

httpcore reaches the network through a backend; on asyncio its default goes through anyio,
whose cancel scopes (one per read and per write, each looking up the current task several
times) cost about a third of the CPU of a small engine request. ``StreamBackend`` does the
same work on asyncio's own streams, with ``asyncio.timeout`` for httpcore's per-operation
timeouts, and raises httpcore's exceptions, so httpx maps them as it always does
(``httpx.ConnectError``, ``httpx.ReadTimeout``...).

Where the outbound policy looks at addresses (private ones blocked, or hosts allowed by
network), a connection resolves the host itself and checks the addresses it connects to:
a name that resolved to an allowed address when the request was checked and to another by
the time of the connection (DNS rebinding) is refused.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore import AsyncNetworkBackend, AsyncNetworkStream
from httpcore._backends.base import SOCKET_OPTION
from httpcore._utils import is_socket_readable

from app.outbound import policy as outbound
from app.outbound.errors import Unreachable

__all__ = ["StreamBackend"]

# How much a read may take from the socket's buffer at once.
_READ_LIMIT = 2**16
# httpcore's names for what a connection can tell, and asyncio's for the same.
_EXTRA_INFO = {
    "ssl_object": "ssl_object",
    "client_addr": "sockname",
    "server_addr": "peername",
    "socket": "socket",
}


class _Stream(AsyncNetworkStream):
    """One connection: an asyncio stream pair, upgraded to TLS in place when asked."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            if timeout is None:
                return await self._reader.read(max_bytes)
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout("timed out reading from the server") from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        writer = self._writer
        try:
            writer.write(buffer)
            if writer.transport.get_write_buffer_size():  # only a full socket needs a wait
                if timeout is None:
                    await writer.drain()
                else:
                    async with asyncio.timeout(timeout):
                        await writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout("timed out writing to the server") from exc
        except (OSError, RuntimeError) as exc:  # RuntimeError: written after the close
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self._writer.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            await self.aclose()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from exc
        except (OSError, ssl.SSLError) as exc:  # ssl.SSLError is an OSError; said for clarity
            await self.aclose()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        writer = self._writer
        if info == "is_readable":
            # An idle connection the server has closed reads as readable: httpcore then
            # drops it instead of sending a request into it.
            sock = writer.get_extra_info("socket")
            return sock is None or bool(is_socket_readable(sock))
        key = _EXTRA_INFO.get(info)
        return None if key is None else writer.get_extra_info(key)


async def _open(
    host: str, port: int, local_address: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to ``host:port``; where the outbound policy looks at addresses, only to
    addresses it allows, resolved here, so that the addresses checked are the ones used."""
    targets = [host]
    policy = outbound.current_policy()
    if policy.needs_resolution:
        addresses = await outbound.resolve_host(host, port)
        if not addresses:
            raise OSError(f"cannot resolve {host}")
        if not outbound.allows(policy, host.lower(), port, addresses):
            # Not an httpcore error: httpx lets it through, and the engine client reports
            # it as it reports the same refusal before a request.
            raise Unreachable(outbound.refusal_message(f"{host}:{port}"))
        targets = list(dict.fromkeys(str(a) for a in addresses))
    local = (local_address, 0) if local_address else None
    failure: OSError | None = None
    for target in targets:
        try:
            return await asyncio.open_connection(target, port, local_addr=local, limit=_READ_LIMIT)
        except OSError as exc:
            failure = exc
    assert failure is not None
    raise failure


class StreamBackend(AsyncNetworkBackend):
    """Opens plain TCP connections as asyncio streams (TLS is added by ``start_tls``)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await _open(host, port, local_address)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _Stream(reader, writer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_unix_connection(path, limit=_READ_LIMIT)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"timed out connecting to {path}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return _Stream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
