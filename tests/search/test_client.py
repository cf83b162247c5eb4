"""SearchClient: retries, timeouts, limits, headers and auth, credential hygiene."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from app.search import (
    EndpointConfig,
    EngineError,
    EngineHTTPError,
    EngineResponseError,
    EngineTimeout,
    EngineUnavailable,
    SearchClient,
    SearchRequest,
)
from app.vocabulary import Engine

TEMPLATE = '{"query": {"match": {"title": "#$query##"}}}'
REQUEST = SearchRequest(template=TEMPLATE, query_text="star wars", field_spec="id:_id title:title")
OK_BODY = {
    "hits": {
        "total": {"value": 1, "relation": "eq"},
        "hits": [{"_id": "913", "_source": {"title": "Star Wars Ep. IV: A New Hope"}}],
    }
}
SECRET = "s3cr3t-pa55"


def endpoint(url: str = "http://es:9200/movies", **kwargs: Any) -> EndpointConfig:
    return EndpointConfig(Engine.ELASTICSEARCH, url, **kwargs)


class Sleeps:
    """Records backoff sleeps instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def search(
    handler: Callable[[httpx.Request], Any],
    ep: EndpointConfig,
    req: SearchRequest = REQUEST,
    sleeps: Sleeps | None = None,
) -> Any:
    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=sleeps or Sleeps())
            return await client.search(ep, req)

    return asyncio.run(go())


def test_posts_to_search_with_headers_and_basic_auth() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json=OK_BODY)

    ep = endpoint("http://es:9200/movies/", headers={"X-Api-Key": "k1"}, basic_auth=f"bob:{SECRET}")
    result = search(handler, ep)
    assert [d.id for d in result.docs] == ["913"]
    (sent,) = seen
    assert (sent.method, str(sent.url)) == ("POST", "http://es:9200/movies/_search")
    assert sent.headers["x-api-key"] == "k1"
    expected = base64.b64encode(f"bob:{SECRET}".encode()).decode()
    assert sent.headers["authorization"] == f"Basic {expected}"


def test_503_then_success_is_retried_with_backoff() -> None:
    statuses = [503, 502, 200]
    sleeps = Sleeps()

    def handler(req: httpx.Request) -> httpx.Response:
        status = statuses.pop(0)
        return httpx.Response(status, json=OK_BODY if status == 200 else {"error": "busy"})

    result = search(handler, endpoint(), sleeps=sleeps)
    assert result.num_found == 1
    assert statuses == []
    assert sleeps.calls == [0.2, 0.4]


def test_503_every_time_gives_unavailable_after_three_attempts() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(503, text="<html>Service Unavailable</html>")

    with pytest.raises(EngineUnavailable, match=r"HTTP 503 .*Service Unavailable"):
        search(handler, endpoint())
    assert len(calls) == 3


def test_400_is_not_retried_and_carries_engine_message() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        body = {
            "error": {"type": "parsing_exception", "reason": "unknown query [bogus]"},
            "status": 400,
        }
        return httpx.Response(400, json=body)

    with pytest.raises(EngineHTTPError, match=r"parsing_exception: unknown query \[bogus\]"):
        search(handler, endpoint())
    assert len(calls) == 1


def test_connect_error_is_retried_then_unavailable() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=req)

    with pytest.raises(EngineUnavailable, match="cannot connect to http://es:9200/movies"):
        search(handler, endpoint())
    assert len(calls) == 3


def test_read_timeout_is_not_retried() -> None:
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        raise httpx.ReadTimeout("timed out", request=req)

    with pytest.raises(EngineTimeout, match="within 10 s"):
        search(handler, endpoint())
    assert len(calls) == 1


def test_malformed_json_is_a_response_error() -> None:
    with pytest.raises(EngineResponseError, match=re.escape("is not JSON: '{\"hits\": [oops'")):
        search(lambda req: httpx.Response(200, text='{"hits": [oops'), endpoint())


def test_missing_id_field_is_a_response_error() -> None:
    req = SearchRequest(template=TEMPLATE, query_text="x", field_spec="id:imdb_id title:title")
    with pytest.raises(EngineResponseError, match=r"^doc 1 has no id field 'imdb_id'$"):
        search(lambda r: httpx.Response(200, json=OK_BODY), endpoint(), req)


def test_max_concurrency_is_respected() -> None:
    in_flight = 0
    peak = 0

    async def handler(req: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json=OK_BODY)

    async def go() -> None:
        nonlocal peak
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http)
            ep = endpoint(max_concurrency=3)
            other = endpoint("http://other.test:9200/movies", max_concurrency=2)
            await asyncio.gather(*(client.search(ep, REQUEST) for _ in range(12)))
            peaks.append(peak)
            peak = 0
            await asyncio.gather(*(client.search(other, REQUEST) for _ in range(12)))
            peaks.append(peak)

    peaks: list[int] = []
    asyncio.run(go())
    assert peaks == [3, 2]


def test_requests_per_minute_spaces_requests() -> None:
    sleeps = Sleeps()
    ep = endpoint(requests_per_minute=600)  # one request every 0.1 s

    async def go() -> None:
        transport = httpx.MockTransport(lambda req: httpx.Response(200, json=OK_BODY))
        async with httpx.AsyncClient(transport=transport) as http:
            client = SearchClient(http, sleep=sleeps)
            await asyncio.gather(*(client.search(ep, REQUEST) for _ in range(4)))

    asyncio.run(go())
    assert len(sleeps.calls) == 3
    assert sleeps.calls == sorted(sleeps.calls)
    assert sleeps.calls[-1] == pytest.approx(0.3, abs=0.05)


def test_credentials_never_appear_in_errors_or_repr() -> None:
    ep = EndpointConfig(
        Engine.SOLR,
        f"http://alice:{SECRET}@solr:8983/solr/movies/select",
        headers={"Authorization": f"Bearer {SECRET}"},
        basic_auth=f"alice:{SECRET}",
    )
    assert SECRET not in repr(ep)
    assert "Authorization" in repr(ep)
    req = SearchRequest(template="q=#$query##", query_text="x", field_spec="id:id")
    failures: list[Callable[[httpx.Request], httpx.Response]] = [
        lambda r: httpx.Response(401, text="Unauthorized"),
        lambda r: httpx.Response(503),
        lambda r: httpx.Response(200, text="not json"),
    ]

    def refuse(r: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=r)

    def slow(r: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=r)

    for handler in [*failures, refuse, slow]:
        with pytest.raises(EngineError) as info:
            search(handler, ep, req)
        assert SECRET not in str(info.value)
        assert "solr:8983/solr/movies/select" in str(info.value)


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[tuple[str, list[int]]]:
    """A server that accepts connections and never answers."""
    connections: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        with contextlib.suppress(Exception):
            await reader.read()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/movies", connections
    finally:
        server.close()


def test_slow_engine_times_out_without_retry() -> None:
    async def go() -> tuple[EngineTimeout, list[int]]:
        async with silent_server() as (url, connections), httpx.AsyncClient() as http:
            client = SearchClient(http, sleep=Sleeps())
            with pytest.raises(EngineTimeout) as info:
                await client.search(endpoint(url, timeout_s=0.2), REQUEST)
            return info.value, connections

    error, connections = asyncio.run(go())
    assert "within 0.2 s" in str(error)
    assert isinstance(error.__cause__, (httpx.ReadTimeout, TimeoutError))
    assert len(connections) == 1


def test_engine_down_is_unavailable(engine_down_url: str) -> None:
    sleeps = Sleeps()

    async def go() -> None:
        async with httpx.AsyncClient() as http:
            client = SearchClient(http, sleep=sleeps)
            await client.search(endpoint(f"{engine_down_url}/movies"), REQUEST)

    with pytest.raises(EngineUnavailable, match="cannot connect to"):
        asyncio.run(go())
    assert sleeps.calls == [0.2, 0.4]


def test_endpoint_config_validates_limits() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        endpoint(max_concurrency=0)
    with pytest.raises(ValueError, match="unknown engine"):
        EndpointConfig("bing", "http://x")  # type: ignore[arg-type]
