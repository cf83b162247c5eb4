"""SearchClient limits: whole-request timeout, answer size cap, deep JSON, outbound policy."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.outbound.errors import Unreachable
from app.outbound.policy import OutboundPolicy, check_destination
from app.search import (
    EndpointConfig,
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
OK = json.dumps({"hits": {"total": {"value": 1}, "hits": [{"_id": "1", "_source": {}}]}})


async def _no_sleep(_seconds: float) -> None:
    return None


@contextlib.asynccontextmanager
async def trickling_server(pause_s: float) -> AsyncIterator[str]:
    """A server that answers 200 at once, then sends its body one byte per ``pause_s``."""

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            writer.write(f"Content-Length: {len(OK)}\r\n\r\n".encode())
            for byte in OK.encode():
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(pause_s)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/movies"
    finally:
        server.close()


def test_timeout_bounds_the_whole_request_not_each_read() -> None:
    # Every byte arrives well within the read timeout; the whole answer takes ~10 s.
    async def go() -> EngineTimeout:
        async with trickling_server(0.1) as url, httpx.AsyncClient() as http:
            client = SearchClient(http, sleep=_no_sleep)
            ep = EndpointConfig(Engine.ELASTICSEARCH, url, timeout_s=0.5)
            with pytest.raises(EngineTimeout) as info:
                await client.search(ep, REQUEST)
            return info.value

    error = asyncio.run(go())
    assert "within 0.5 s" in str(error)


def _search(body: bytes | str, policy: OutboundPolicy | None = None, **headers: str) -> Any:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers=headers)

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep, policy=policy)
            return await client.search(
                EndpointConfig(Engine.ELASTICSEARCH, "http://es:9200/m"), REQUEST
            )

    return asyncio.run(go())


def test_answer_larger_than_the_cap_is_refused() -> None:
    small = OutboundPolicy(block_private=False, max_response_bytes=1000)
    big = OK[:-1] + ', "pad": "' + "x" * 2000 + '"}'
    with pytest.raises(EngineResponseError, match="larger than"):
        _search(big, small)
    assert _search(OK, small).num_found == 1


def test_deeply_nested_answer_is_a_response_error() -> None:
    with pytest.raises(EngineResponseError, match="nested too deeply"):
        _search("[" * 100_000 + "]" * 100_000)


def test_error_answer_is_truncated_and_has_no_headers() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(418, text="y" * 5000, headers={"X-Internal": "secret-header"})

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep)
            await client.search(EndpointConfig(Engine.ELASTICSEARCH, "http://es:9200/m"), REQUEST)

    with pytest.raises(EngineHTTPError) as info:
        asyncio.run(go())
    assert "418" in str(info.value)
    assert len(str(info.value)) < 400
    assert "secret-header" not in str(info.value)


def _check(policy: OutboundPolicy, url: str) -> None:
    asyncio.run(check_destination(policy, httpx.URL(url), url))


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9200/x", "http://localhost:8983/solr", "http://10.1.2.3/", "http://[::1]/"],
)
def test_private_addresses_are_refused_when_blocked(url: str) -> None:
    with pytest.raises(Unreachable, match="not allowed"):
        _check(OutboundPolicy(block_private=True), url)
    _check(OutboundPolicy(block_private=False), url)


def test_allowed_hosts_patterns() -> None:
    policy = OutboundPolicy(allowed_hosts=("*.search.example.com", "solr:8983", "10.0.0.0/8"))
    _check(policy, "https://es1.search.example.com/movies")
    _check(policy, "http://solr:8983/solr")
    _check(policy, "http://10.4.5.6:9200/")
    for url in ["http://solr:8984/", "http://evil.example.com/", "http://11.0.0.1/"]:
        with pytest.raises(Unreachable, match="not allowed"):
            _check(policy, url)


def test_network_allowed_explicitly_passes_private_blocking() -> None:
    policy = OutboundPolicy(allowed_hosts=("10.0.0.0/8",), block_private=True)
    _check(policy, "http://10.4.5.6:9200/")
    with pytest.raises(Unreachable):
        _check(policy, "http://127.0.0.1:9200/")


def test_policy_is_checked_before_every_attempt_including_retries() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(503)

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep, policy=OutboundPolicy(block_private=True))
            await client.search(EndpointConfig(Engine.ELASTICSEARCH, "http://127.0.0.1/m"), REQUEST)

    with pytest.raises(EngineUnavailable, match="not allowed"):
        asyncio.run(go())
    assert calls == []


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("[Errno 111] Connection refused"), httpx.ConnectTimeout("timed out")],
)
def test_refused_and_filtered_ports_read_the_same(failure: Exception) -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        raise failure

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep, attempts=1)
            await client.search(EndpointConfig(Engine.ELASTICSEARCH, "http://es:9200/m"), REQUEST)

    with pytest.raises(EngineUnavailable) as info:
        asyncio.run(go())
    assert str(info.value) == "cannot connect to http://es:9200/m"


def test_nul_and_lone_surrogates_are_made_storable() -> None:
    body = (
        '{"hits": {"total": {"value": 1}, "hits": [{"_id": "a\\u0000b", '
        '"_source": {"title": "x\\ud800y\\u0000", "ok": "\\ud83d\\ude00"}}]}}'
    )
    req = SearchRequest(template=TEMPLATE, query_text="q", field_spec="id:_id title:title ok")
    result = _search_with(body, req)
    (doc,) = result.docs
    assert doc.id == "a\ufffdb"
    assert doc.fields["title"] == "x\ufffdy\ufffd"
    assert doc.fields["ok"] == "\U0001f600"
    json.dumps(doc.fields).encode("utf-8")


def _search_with(body: str, req: SearchRequest) -> Any:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep)
            return await client.search(
                EndpointConfig(Engine.ELASTICSEARCH, "http://es:9200/m"), req
            )

    return asyncio.run(go())


def test_public_message_hides_sql() -> None:
    from sqlalchemy.exc import IntegrityError

    from app.errors import NotFound, public_message

    exc = IntegrityError("INSERT INTO run_queries VALUES (%s)", {"secret": "param"}, Exception())
    assert "INSERT" not in public_message(exc) and "param" not in public_message(exc)
    assert public_message(NotFound("No such case.")) == "No such case."


def test_answers_orjson_refuses_are_still_read() -> None:
    # NaN and integers beyond 64 bits are not strict JSON; engines send them anyway.
    body = (
        '{"hits": {"total": {"value": 1}, "hits": [{"_id": "a", '
        '"_source": {"title": "t", "pop": NaN, "big": 100000000000000000000000000000}}]}}'
    )
    req = SearchRequest(template=TEMPLATE, query_text="q", field_spec="id:_id title:title big")
    (doc,) = _search_with(body, req).docs
    assert (doc.id, doc.fields["big"]) == ("a", 10**29)


def test_an_answer_that_is_not_json_is_that_querys_error() -> None:
    req = SearchRequest(template=TEMPLATE, query_text="q", field_spec="id:_id title:title")
    with pytest.raises(EngineResponseError, match="is not JSON"):
        _search_with("<html>Bad gateway</html>", req)


def test_a_body_with_an_integer_beyond_64_bits_is_still_sent() -> None:
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(200, json={"hits": {"total": {"value": 0}, "hits": []}})

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = SearchClient(http, sleep=_no_sleep)
            await client.search(
                EndpointConfig(Engine.ELASTICSEARCH, "http://es:9200/m"),
                SearchRequest(
                    template='{"query": {"term": {"n": #$qOption.n##}}}',
                    query_text="q",
                    query_options={"n": 10**30},
                ),
            )

    asyncio.run(go())
    assert json.loads(sent[0])["query"] == {"term": {"n": 10**30}}
