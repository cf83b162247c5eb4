"""An OpenSearch-shaped engine that fails on some queries for some knob values.

The template puts the query text at ``query.match.title`` and a knob at ``ext.k``. Every
query gets docs "good" and "bad"; "good" first, except that the ``hard`` queries get "bad"
first when k is 1 and an HTTP 500 when k is 2. So k = 2 scores higher over the easy queries
alone than k = 1 over all of them: the case a partial run must not win.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.slow_engine import loopback_server

TEMPLATE = '{"query": {"match": {"title": "#$query##"}}, "ext": {"k": ##k##}}'


def _handler(hard: frozenset[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            text, k = body["query"]["match"]["title"], body["ext"]["k"]
            if text in hard and k == 2:
                self._answer(500, {"error": {"type": "too_many_clauses", "reason": "fuzzy"}})
                return
            order = ["bad", "good"] if text in hard else ["good", "bad"]
            hits = [
                {"_id": d, "_score": 2.0 - i, "_source": {"title": d}} for i, d in enumerate(order)
            ]
            self._answer(200, {"hits": {"total": {"value": 2}, "hits": hits}})

        def _answer(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

    return Handler


@contextmanager
def flaky_engine(hard: set[str]) -> Iterator[str]:
    """Serve the engine on a free loopback port; yield its index URL."""
    server = loopback_server()
    server.RequestHandlerClass = _handler(frozenset(hard))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/movies"
    finally:
        server.shutdown()
        server.server_close()
