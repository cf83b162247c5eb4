"""An OpenSearch-shaped engine on a loopback port that holds every search until released.

It lets a test keep a run in flight for as long as it needs (to cancel it, or to pile up
requests waiting for it), then let it go, without timing guesses.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.slow_engine import loopback_server

HOLD_AT_MOST_S = 30  # a forgotten gate still lets the suite finish


class GateEngine:
    """The engine's address, its gate, and how many searches have arrived."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.gate = threading.Event()
        self.arrived = 0
        self.lock = threading.Lock()

    @property
    def index_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/movies"

    def release(self) -> None:
        """Let every held and future search answer."""
        self.gate.set()

    def wait_for_searches(self, count: int, timeout_s: float = 20) -> bool:
        """Wait until at least `count` searches have arrived; say whether they did."""
        done = threading.Event()

        def check() -> None:
            while not done.is_set():
                with self.lock:
                    if self.arrived >= count:
                        done.set()
                        return
                done.wait(0.02)

        checker = threading.Thread(target=check, daemon=True)
        checker.start()
        checker.join(timeout_s)
        arrived = done.is_set()
        done.set()
        return arrived


def _handler(engine: GateEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the OpenSearch adapter POSTs to {index}/_search
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with engine.lock:
                engine.arrived += 1
            engine.gate.wait(HOLD_AT_MOST_S)
            hit: dict[str, Any] = {"_id": "1", "_score": 1.0, "_source": {"title": "One"}}
            body = json.dumps({"hits": {"total": {"value": 1}, "hits": [hit]}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

    return Handler


@contextmanager
def gate_engine() -> Iterator[GateEngine]:
    """Start a gate engine on a free loopback port; release and stop it afterwards."""
    server = loopback_server()
    engine = GateEngine(server)
    server.RequestHandlerClass = _handler(engine)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield engine
    finally:
        engine.release()
        server.shutdown()
        server.server_close()
