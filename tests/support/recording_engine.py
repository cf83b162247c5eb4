"""An OpenSearch-shaped engine on a loopback port that records each request's headers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.slow_engine import loopback_server

__all__ = ["RecordingEngine", "recording_engine"]


class RecordingEngine:
    """An OpenSearch-shaped engine on a loopback port that keeps each request's headers."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.server = loopback_server()
        self.server.RequestHandlerClass = self._handler()

    @property
    def index_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/movies"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with engine.lock:
                    engine.seen.append({k.lower(): v for k, v in self.headers.items()})
                hits = [{"_id": "d1", "_score": 1.0, "_source": {"title": "One"}}]
                body = json.dumps({"hits": {"total": {"value": 1}, "hits": hits}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


@contextmanager
def recording_engine() -> Iterator[RecordingEngine]:
    """Start the engine on a free loopback port; stop it afterwards."""
    engine = RecordingEngine()
    thread = threading.Thread(target=engine.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield engine
    finally:
        engine.server.shutdown()
        engine.server.server_close()
