"""An engine whose answers are hostile, chosen by the query text; and a mapper that is too.

OpenSearch-shaped (POST ``/movies/_search``): the text ``nul`` gets a doc id with a NUL and a
title with a NUL and an unpaired surrogate (as JSON escapes), ``deep`` a displayed field
nested 500 deep, ``count`` a total beyond 32 bits; any other text one plain doc. A search API
(GET ``/api?q=...``) answers ``{"q": text}`` for :data:`HOSTILE_MAPPER` to turn into the same
kinds of docs (and ``deeper``: nested 5000 deep, more than can be read).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.slow_engine import loopback_server

__all__ = ["DEEP", "HOSTILE_MAPPER", "HostileEngine", "hostile_engine"]

DEEP = 500
PLAIN = {"_id": "1", "_score": 1.0, "_source": {"title": "Plain", "director": "Lucas"}}

HOSTILE_MAPPER = """
docsMapper = function(data) {
  const nest = function(n) { let v = "x"; for (let i = 0; i < n; i++) v = [v]; return v; };
  if (data.q === "nul") return [{id: "a\\0b", title: "T\\0\\uD800itle"}];
  if (data.q === "deep") return [{id: "d", title: "Deep", director: nest(DEEP)}];
  if (data.q === "deeper") return [{id: "d", title: "Deeper", director: nest(5000)}];
  return [{id: "1", title: "Plain"}];
};
numberOfResultsMapper = function(data) { return data.q === "count" ? 1e12 : 1; };
""".replace("nest(DEEP)", f"nest({DEEP})")


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _answer(text: str) -> bytes:
    hits: list[dict[str, Any]] = [PLAIN]
    total = 1
    if text == "nul":
        hits = [{"_id": "a\x00b", "_score": 1.0, "_source": {"title": "T\x00\ud800itle"}}]
    elif text == "deep":
        hits = [
            {"_id": "d", "_score": 1.0, "_source": {"title": "Deep", "director": _nested(DEEP)}}
        ]
    elif text == "count":
        total = 10**12
    # The standard library writes NUL and the surrogate as \u escapes, as engines do.
    return json.dumps({"hits": {"total": {"value": total}, "hits": hits}}).encode()


class HostileEngine:
    """The engine's addresses."""

    def __init__(self) -> None:
        self.server = loopback_server()
        self.server.RequestHandlerClass = self._handler()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def index_url(self) -> str:
        return self.url + "/movies"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                self._send(_answer(body["query"]["multi_match"]["query"]))

            def do_GET(self) -> None:
                text = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
                self._send(json.dumps({"q": text}).encode())

            def _send(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


@contextmanager
def hostile_engine() -> Iterator[HostileEngine]:
    """Start the engine on a free loopback port; stop it afterwards."""
    engine = HostileEngine()
    thread = threading.Thread(target=engine.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield engine
    finally:
        engine.server.shutdown()
        engine.server.server_close()
        thread.join(5)
