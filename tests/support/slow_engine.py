"""An OpenSearch-shaped engine that answers every search after a delay, and keeps count.

Each query text always gets the same ten doc ids (derived from the text), so two runs of a
case rank alike. The engine records how many searches it has answered and the most that
were in flight at once, which is what per-endpoint limits are about.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DOCS_PER_QUERY = 10
CORPUS = 40  # doc ids "0" … "39"


def ranking_for(body: bytes) -> list[str]:
    """Return the doc ids the engine answers for this request body."""
    seed = int(hashlib.sha256(body).hexdigest()[:8], 16)
    return [str((seed + 7 * i) % CORPUS) for i in range(DOCS_PER_QUERY)]


class SlowEngine:
    """The engine's address and what it has seen."""

    def __init__(self, server: ThreadingHTTPServer, delay_s: float) -> None:
        self.server = server
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.answered = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.arrivals: list[float] = []

    @property
    def index_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/movies"


def _handler(engine: SlowEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with engine.lock:
                engine.in_flight += 1
                engine.most_in_flight = max(engine.most_in_flight, engine.in_flight)
                engine.arrivals.append(time.monotonic())
            try:
                time.sleep(engine.delay_s)
                hits = [
                    {"_id": doc, "_score": 10.0 - rank, "_source": {"title": f"Doc {doc}"}}
                    for rank, doc in enumerate(ranking_for(body))
                ]
                answer = json.dumps({"hits": {"total": {"value": 100}, "hits": hits}}).encode()
            finally:
                with engine.lock:
                    engine.in_flight -= 1
                    engine.answered += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

    return Handler


def loopback_server(backlog: int = 128) -> ThreadingHTTPServer:
    """Return a threading HTTP server listening on a free loopback port (handler set later).

    The backlog is set before listening: the default of 5 drops the connections of a burst
    of requests, which the client then retries a second later.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler, bind_and_activate=False)
    server.daemon_threads = True
    server.request_queue_size = backlog
    try:
        server.server_bind()
        server.server_activate()
    except BaseException:
        server.server_close()
        raise
    return server


@contextmanager
def slow_engine(delay_s: float = 0.02) -> Iterator[SlowEngine]:
    """Start a slow engine on a free loopback port; stop it afterwards."""
    server = loopback_server()
    engine = SlowEngine(server, delay_s)
    server.RequestHandlerClass = _handler(engine)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield engine
    finally:
        server.shutdown()
        server.server_close()
