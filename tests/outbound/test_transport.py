"""The engine client's transport spreads requests over small pools and keeps count right."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, current_policy, install_policy
from app.outbound.transport import SpreadTransport, engine_http_client
from tests.support.slow_engine import SlowEngine, slow_engine

BODY = b'{"query": {"match_all": {}}}'


def _transport(client: httpx.AsyncClient) -> SpreadTransport:
    transport = client._transport
    assert isinstance(transport, SpreadTransport)
    return transport


async def _spread(engine: SlowEngine, requests: int) -> tuple[list[int], list[int], list[int]]:
    url = engine.index_url
    async with engine_http_client() as client:
        transport = _transport(client)
        calls = [client.post(f"{url}/_search", content=BODY) for _ in range(requests)]
        sending = asyncio.gather(*calls)
        for _ in range(200):  # until every request is at the engine, which holds each 2 s
            if engine.in_flight == requests:
                break
            await asyncio.sleep(0.01)
        during = transport.busy
        answers = await sending
        after = transport.busy
        with pytest.raises(httpx.ConnectError):
            await client.post("http://127.0.0.1:9/_search", content=BODY)
        failed = transport.busy
    assert {a.status_code for a in answers} == {200}
    assert all(len(a.json()["hits"]["hits"]) == 10 for a in answers)
    return during, after, failed


def test_requests_spread_evenly_and_every_pool_is_free_again() -> None:
    with slow_engine(delay_s=2.0) as engine:
        during, after, failed = asyncio.run(_spread(engine, 20))
    assert len(during) == 8 and sum(during) == 20
    assert max(during) - min(during) <= 1  # 20 over 8 pools: 3 or 2 each
    assert after == [0] * 8  # a response read to its end frees its pool's count
    assert failed == [0] * 8  # so does a request that could not connect
    assert engine.most_in_flight == 20  # the total limits are kept, not divided down


def test_a_streamed_response_counts_until_it_is_closed() -> None:
    async def streamed(url: str) -> tuple[int, int]:
        async with engine_http_client() as client:
            transport = _transport(client)
            async with client.stream("POST", f"{url}/_search", content=BODY) as response:
                assert response.status_code == 200
                open_count = sum(transport.busy)
            return open_count, sum(transport.busy)

    with slow_engine(delay_s=0.0) as engine:
        assert asyncio.run(streamed(engine.index_url)) == (1, 0)


Lines = list[bytes]


async def _recording_server(lines: Lines) -> asyncio.Server:
    """A server that keeps each request's first line and answers ``ok`` (proxy or engine)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(handler, "127.0.0.1", 0)


def _port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch) -> Callable[[OutboundPolicy], object]:
    """Install a process-wide outbound policy for one test."""
    monkeypatch.setattr("app.outbound.policy._installed", current_policy())
    return install_policy


def test_with_a_proxy_the_destination_is_checked_before_the_proxy_is_asked(
    monkeypatch: pytest.MonkeyPatch, policy: Callable[[OutboundPolicy], object]
) -> None:
    policy(OutboundPolicy(trusted=("engine.test:8080",)))  # the default, plus one name
    proxied: Lines = []
    direct: Lines = []

    async def ask() -> tuple[str, pytest.ExceptionInfo[Unreachable]]:
        proxy, engine = await _recording_server(proxied), await _recording_server(direct)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_port(proxy)}")
        async with proxy, engine, engine_http_client() as client:
            assert isinstance(client._transport, SpreadTransport)  # no plain httpx fallback
            answer = await client.get("http://engine.test:8080/movies/_search")
            with pytest.raises(Unreachable, match="not allowed") as refused:
                await client.get(f"http://127.0.0.1:{_port(engine)}/openapi.json")
        return answer.text, refused

    text, refused = asyncio.run(ask())
    assert text == "ok"
    # The proxy (itself on loopback: the operator's choice) was asked for the allowed
    # name only; the loopback destination never reached it, nor the engine.
    assert proxied == [b"GET http://engine.test:8080/movies/_search HTTP/1.1"]
    assert direct == []
    assert "RELEVO_ALLOWED_ENGINE_HOSTS" in str(refused.value)


@pytest.mark.parametrize("allowed", [False, True], ids=["loopback refused", "loopback allowed"])
def test_a_host_no_proxy_exempts_is_connected_to_through_the_guarded_pools(
    monkeypatch: pytest.MonkeyPatch, policy: Callable[[OutboundPolicy], object], allowed: bool
) -> None:
    policy(OutboundPolicy(trusted=("127.0.0.0/8",) if allowed else ()))
    proxied: Lines = []
    direct: Lines = []

    async def ask() -> str:
        proxy, engine = await _recording_server(proxied), await _recording_server(direct)
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{_port(proxy)}")
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_port(proxy)}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        async with proxy, engine, engine_http_client() as client:
            response = await client.get(f"http://127.0.0.1:{_port(engine)}/x")
            return response.text

    if allowed:
        assert asyncio.run(ask()) == "ok"
        assert direct == [b"GET /x HTTP/1.1"]
    else:
        with pytest.raises(Unreachable, match="not allowed"):
            asyncio.run(ask())
        assert direct == []
    assert proxied == []
