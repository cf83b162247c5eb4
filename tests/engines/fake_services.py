"""Local HTTP services on 127.0.0.1: a JSON search API, an HTML results page, and a Vespa.

Each records the last request (method, path, query string, headers, body) it answered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Vespa 8's default JSON renderer, as /search/ answers it.
VESPA_ANSWER: dict[str, Any] = {
    "root": {
        "id": "toplevel",
        "relevance": 1.0,
        "fields": {"totalCount": 42},
        "coverage": {
            "coverage": 100,
            "documents": 100,
            "full": True,
            "nodes": 1,
            "results": 1,
            "resultsFull": 1,
        },
        "children": [
            {
                "id": "id:movies:movie::11",
                "relevance": 0.81,
                "source": "movies",
                "fields": {
                    "sddocname": "movie",
                    "documentid": "id:movies:movie::11",
                    "movie_id": 11,
                    "title": "Star Wars",
                    "summaryfeatures": {"bm25(title)": 3.2, "vespa.summaryFeatures.cached": 0.0},
                },
            },
            {
                "id": "id:movies:movie::1891",
                "relevance": 0.52,
                "source": "movies",
                "fields": {
                    "sddocname": "movie",
                    "documentid": "id:movies:movie::1891",
                    "movie_id": 1891,
                    "title": "The Empire Strikes Back",
                },
            },
        ],
    }
}
VESPA_ERROR: dict[str, Any] = {
    "root": {
        "id": "toplevel",
        "relevance": 1.0,
        "fields": {"totalCount": 0},
        "errors": [
            {
                "code": 4,
                "summary": "Invalid query parameter",
                "source": "movies",
                "message": "Could not parse query: Expected operator",
            }
        ],
    }
}
# The shape of Quepid's documented search API example: a bare list of publications.
PUBLICATIONS = [
    {"publication_id": 101, "title": "Café & crème", "publish_date_int": 2019},
    {"publication_id": 102, "title": "Search relevance", "publish_date_int": 2021},
    {"publication_id": 103, "title": "Learning to rank", "publish_date_int": 2022},
]
HTML_PAGE = """<html><body><ol class="results">
<li data-id="h1"><a>First hit</a></li>
<li data-id="h2"><a>Second hit</a></li>
</ol><p class="count">About 7 results</p></body></html>"""


class Service:
    """Where the service listens and what it saw last."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.last: dict[str, Any] = {}

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


def _handler(service: Service) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            service.last = {
                "method": method,
                "path": parts.path,
                "query": parse_qs(parts.query),
                "headers": dict(self.headers),
                "body": body,
            }
            if parts.path.startswith("/search/"):  # Vespa
                sent = json.loads(body or b"{}")
                answer = VESPA_ERROR if "broken" in str(sent.get("query")) else VESPA_ANSWER
                self._send(400 if answer is VESPA_ERROR else 200, json.dumps(answer).encode())
            elif parts.path == "/html":
                self._send(200, HTML_PAGE.encode(), "text/html; charset=utf-8")
            else:
                self._send(200, json.dumps(PUBLICATIONS).encode())

        def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def running_service() -> Iterator[Service]:
    """Start the services on a free port of 127.0.0.1 for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    service = Service(server)
    server.RequestHandlerClass = _handler(service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
