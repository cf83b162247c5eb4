"""Local stand-ins for what alerts are sent to: a webhook receiver and an SMTP sink."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    """What a receiver got: each request's headers and raw body; the codes it answers with."""

    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    # answered in turn, then 200; 0 breaks the connection without an answer
    codes: list[int] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, Received]]:
    """Serve a webhook receiver on 127.0.0.1; yield its URL and what it received."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            code = received.codes.pop(0) if received.codes else 200
            if code == 0:
                self.close_connection = True
                return
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            if code == 200:
                received.arrived.set()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def smtp_sink() -> Iterator[tuple[str, list[str]]]:
    """Serve a minimal SMTP server; yield its smtp:// URL and the messages' raw text."""
    messages: list[str] = []

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.wfile.write(b"220 sink ESMTP\r\n")
            while line := self.rfile.readline():
                verb = line.decode().strip().split(" ")[0].upper()
                if verb == "DATA":
                    self.wfile.write(b"354 go on\r\n")
                    data = []
                    while (part := self.rfile.readline()) not in (b".\r\n", b""):
                        data.append(part.decode())
                    messages.append("".join(data))
                    self.wfile.write(b"250 kept\r\n")
                elif verb == "QUIT":
                    self.wfile.write(b"221 bye\r\n")
                    return
                else:
                    self.wfile.write(b"250 ok\r\n")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"smtp://127.0.0.1:{server.server_address[1]}", messages
    finally:
        server.shutdown()
        server.server_close()
