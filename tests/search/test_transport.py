"""The engine client's transport spreads requests over small pools and keeps count right."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app.search.transport import SpreadTransport, engine_http_client
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


def test_a_proxy_in_the_environment_keeps_httpx_s_own_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    client = engine_http_client()
    assert not isinstance(client._transport, SpreadTransport)
    assert client._mounts  # the environment's proxy is mounted
