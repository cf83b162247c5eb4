"""The engine pools' network layer on asyncio streams: bodies, timeouts, closed connections, TLS."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import itertools
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from app.outbound.network import StreamBackend
from app.outbound.policy import IPAddress, OutboundPolicy, current_policy, install_policy
from app.outbound.transport import (
    CLIENT_LIMITS,
    SpreadTransport,
    _stream_transport,
    engine_http_client,
)
from app.search import SearchClient
from app.search.errors import EngineUnavailable
from app.search.types import EndpointConfig, SearchRequest
from app.vocabulary import Engine

TEMPLATE = '{"query": {"match": {"title": "#$query##"}}}'
LOOPBACK = ipaddress.ip_address("127.0.0.1")
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return await reader.readexactly(length) if length else b""


def _answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def _serve(handler: Handler, tls: ssl.SSLContext | None = None) -> asyncio.Server:
    return await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)


def _port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


def test_every_engine_pool_reaches_the_network_through_asyncio_streams() -> None:
    client = engine_http_client()
    transport = client._transport
    assert isinstance(transport, SpreadTransport)
    backends = [pool._pool._network_backend for pool in transport._pools]
    assert len(backends) == 8
    assert all(isinstance(b, StreamBackend) for b in backends)


def test_large_bodies_go_both_ways_whole() -> None:
    sent = bytes(range(256)) * 8192  # 2 MiB: more than a socket buffer takes at once
    answer = b"x" * 3_000_000

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = await _read_request(reader)
        digest = hashlib.sha256(body).hexdigest().encode()
        writer.write(_answer(digest + b"\n" + answer))
        await writer.drain()
        writer.close()

    async def exchange() -> httpx.Response:
        server = await _serve(handler)
        async with server, engine_http_client() as client:
            return await client.post(f"http://127.0.0.1:{_port(server)}/", content=sent)

    response = asyncio.run(exchange())
    digest, _, rest = response.content.partition(b"\n")
    assert digest.decode() == hashlib.sha256(sent).hexdigest()
    assert rest == answer


async def _silent_after_the_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    await _read_request(reader)
    await asyncio.sleep(5)


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(5)  # accepts the connection, never answers (nor the TLS hello)


@pytest.mark.parametrize(
    ("scheme", "handler", "expected"),
    [("http", _silent_after_the_request, httpx.ReadTimeout),
     ("https", _silent, httpx.ConnectTimeout)],
    ids=["no answer: read timeout", "no TLS handshake: connect timeout"],
)  # fmt: skip
def test_a_silent_server_is_a_timeout(
    scheme: str, handler: Handler, expected: type[Exception]
) -> None:
    async def ask() -> None:
        server = await _serve(handler)
        async with server, engine_http_client() as client:
            url = f"{scheme}://127.0.0.1:{_port(server)}/"
            await client.get(url, timeout=httpx.Timeout(0.3))

    with pytest.raises(expected):
        asyncio.run(ask())


def test_a_closed_port_is_a_connect_error() -> None:
    async def ask(port: int) -> None:
        async with engine_http_client() as client:
            await client.get(f"http://127.0.0.1:{port}/")

    server_port = asyncio.run(_closed_port())
    with pytest.raises(httpx.ConnectError):
        asyncio.run(ask(server_port))


async def _closed_port() -> int:
    server = await _serve(lambda r, w: asyncio.sleep(0))
    port = _port(server)
    server.close()
    await server.wait_closed()
    return port


def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_request(reader)
        writer.write(_answer(b"one answer per connection"))  # kept alive, by HTTP/1.1 rules
        await writer.drain()
        writer.close()  # ...yet closed by the server once the answer is out

    async def twice() -> list[bytes]:
        server = await _serve(handler)
        async with server, engine_http_client() as client:
            url = f"http://127.0.0.1:{_port(server)}/"
            first = await client.get(url)
            await asyncio.sleep(0.1)  # the close reaches the client's idle connection
            second = await client.get(url)
            return [first.content, second.content]

    assert asyncio.run(twice()) == [b"one answer per connection"] * 2
    assert connections == 2


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, made with openssl."""
    openssl = shutil.which("openssl")
    assert openssl, "the TLS tests need the openssl command"
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _tls_server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    return context


def test_https_works_and_verifies_the_certificate(certificate: tuple[Path, Path]) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            body = await _read_request(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            return  # the client refused the certificate
        writer.write(_answer(b"over TLS: " + body))
        await writer.drain()
        writer.close()

    async def ask(trusting: bool) -> bytes:
        server = await _serve(handler, _tls_server_context(certificate))
        if trusting:
            trust = ssl.create_default_context(cafile=str(certificate[0]))
            client = httpx.AsyncClient(transport=_stream_transport(CLIENT_LIMITS, trust))
        else:
            client = engine_http_client()  # the system's CAs do not know this certificate
        async with server, client:
            response = await client.post(f"https://127.0.0.1:{_port(server)}/", content=b"hi")
            return response.content

    assert asyncio.run(ask(trusting=True)) == b"over TLS: hi"
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(ask(trusting=False))


def _engine_counting(connections: list[int]) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        await _read_request(reader)
        writer.write(_answer(b'{"hits": {"total": {"value": 0}, "hits": []}}'))
        await writer.drain()
        writer.close()

    return handler


async def _search(url: str) -> int:
    async with engine_http_client() as http:
        client = SearchClient(http, sleep=_no_sleep)
        result = await client.search(
            EndpointConfig(Engine.OPENSEARCH, url), SearchRequest(TEMPLATE, "q")
        )
        return result.num_found or 0


async def _no_sleep(_seconds: float) -> None:
    return None


@pytest.fixture
def blocking(monkeypatch: pytest.MonkeyPatch) -> Callable[[OutboundPolicy], object]:
    """Install a process-wide outbound policy for one test."""
    previous = current_policy()
    monkeypatch.setattr("app.outbound.policy._installed", previous)
    return install_policy


def test_a_name_that_resolves_elsewhere_after_the_check_is_refused_at_connect(
    monkeypatch: pytest.MonkeyPatch, blocking: Callable[[OutboundPolicy], object]
) -> None:
    """DNS rebinding: public when the request is checked, loopback when it connects."""
    answers = itertools.cycle([[ipaddress.ip_address("93.184.216.34")], [LOOPBACK]])

    async def rebinding(host: str, port: int) -> list[IPAddress]:
        return next(answers)

    monkeypatch.setattr("app.outbound.policy.resolve_host", rebinding)
    blocking(OutboundPolicy(block_private=True))
    connections: list[int] = []

    async def ask() -> None:
        server = await _serve(_engine_counting(connections))
        async with server:
            # "localhost" reaches the engine below through the system's resolver: a
            # connection that resolved the name again on its own would get there.
            await _search(f"http://localhost:{_port(server)}/movies")

    with pytest.raises(EngineUnavailable, match="not allowed"):  # a search's error
        asyncio.run(ask())
    assert connections == []


def test_a_connection_goes_to_the_address_the_policy_allowed(
    monkeypatch: pytest.MonkeyPatch, blocking: Callable[[OutboundPolicy], object]
) -> None:
    resolved: list[str] = []

    async def resolver(host: str, port: int) -> list[IPAddress]:
        resolved.append(host)
        return [LOOPBACK]

    monkeypatch.setattr("app.outbound.policy.resolve_host", resolver)
    blocking(OutboundPolicy(allowed_hosts=("127.0.0.0/8",), block_private=True))
    connections: list[int] = []

    async def ask() -> int:
        server = await _serve(_engine_counting(connections))
        async with server:
            return await _search(f"http://engine.internal:{_port(server)}/movies")

    # The name exists only in the policy's resolver: the connection used its address.
    assert asyncio.run(ask()) == 0
    assert connections == [1]
    assert resolved == ["engine.internal", "engine.internal"]  # checked, then connected
