"""A local language-model server speaking the OpenAI chat-completions and Anthropic Messages
wire formats, whose answers the tests script through the document they are asked about.

The judge's prompt carries the document as JSON between ``<<<RESULT`` and ``RESULT>>>``;
the fake reads it and answers by its ``fake`` field:

- absent: ``{"rating": <the doc's "grade", default 1>, "explanation": "fake says so"}``;
- ``"non_json"``: prose; ``"off_scale"``: rating 7; ``"no_rating"``: an explanation only;
- ``"fenced"``: the JSON inside a Markdown code fence;
- ``"500"``: HTTP 500 every time; ``"500_once"``: 500 the first time, then an answer;
- ``"429_once"``: 429 with ``Retry-After: 0`` (OpenAI path) or ``retry-after-ms: 20``
  (Anthropic path) the first time, then an answer;
- ``"slow"``: sleeps ``slow_s`` before answering (for timeouts);
- with ``gate`` set, every request waits for it to open (a hanging model); with
  ``retry_after`` set, every request gets a 429 with that ``Retry-After``;
- ``"obey"``: answers whatever number follows "answer" in the document's text (a model
  that follows instructions injected into the document).

On the Anthropic path, a request that forces a tool (``tool_choice``) gets the scripted JSON
object back as that tool's ``input`` in a ``tool_use`` block, as the Messages API answers;
a scripted reply that is not a JSON object (prose, a code fence) comes back as text, as from
a proxy that drops tools.

Usage is counted like the real services: input tokens = prompt characters / 4, output 12.
Every request is recorded (path, headers, JSON body) for the tests to inspect.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OUTPUT_TOKENS = 12
_DOC = re.compile(r"<<<RESULT\n(.*?)\nRESULT>>>", re.DOTALL)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeLLM:
    """The server's state: its URL, what it received, how it behaves."""

    url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)
    delay_s: float = 0.0
    slow_s: float = 3.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stamps: list[float] = field(default_factory=list)
    # When set, every request waits until the gate opens (a model that hangs), at most 60 s.
    gate: threading.Event | None = None
    # Requests being answered now, and the most ever at once.
    in_flight: int = 0
    most_in_flight: int = 0
    # Answer every request with a 429 and this Retry-After (seconds), when set.
    retry_after: str | None = None

    def prompt_of(self, body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])


def _doc(prompt: str) -> dict[str, Any]:
    found = _DOC.search(prompt)
    if not found:
        return {}
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _reply_text(doc: dict[str, Any]) -> str:
    mode = doc.get("fake")
    grade = doc.get("grade", 1)
    if mode == "non_json":
        return "I think this result is quite relevant."
    if mode == "off_scale":
        return json.dumps({"rating": 7, "explanation": "very very relevant"})
    if mode == "no_rating":
        return json.dumps({"explanation": "hard to say"})
    if mode == "fenced":
        return "```json\n" + json.dumps({"rating": grade, "explanation": "fenced"}) + "\n```"
    if mode == "obey":
        said = re.search(r"answer (\d+)", json.dumps(doc))
        return json.dumps({"rating": int(said.group(1)) if said else grade, "explanation": "ok"})
    return json.dumps({"rating": grade, "explanation": "fake says so"})


def _anthropic_content(body: dict[str, Any], text: str) -> tuple[list[dict[str, Any]], str]:
    forced = body.get("tool_choice") or {}
    try:
        scripted = json.loads(text)
    except ValueError:
        scripted = None
    if forced.get("type") == "tool" and isinstance(scripted, dict):
        block = {"type": "tool_use", "id": "toolu_fake", "name": forced["name"], "input": scripted}
        return [block], "tool_use"
    return [{"type": "text", "text": text}], "end_turn"


def _handler(state: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # the monotonic times of the requests so far
            with state.lock:
                stamps = list(state.stamps)
            self._json(200, stamps)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw)
            anthropic = self.path.endswith("/v1/messages")
            with state.lock:
                state.requests.append(Recorded(self.path, dict(self.headers.items()), body))
                state.stamps.append(time.monotonic())
            if self.path.startswith("/redirect"):
                self._send(307, b"", {"Location": "http://elsewhere.invalid/v1/chat/completions"})
                return
            prompt = state.prompt_of(body)
            doc = _doc(prompt)
            mode = str(doc.get("fake", ""))
            key = f"{mode}:{doc.get('id')}"
            with state.lock:
                state.seen[key] += 1
                first = state.seen[key] == 1
            with state.lock:
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                self._answer(body, prompt, doc, mode, first, anthropic)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _answer(
            self,
            body: dict[str, Any],
            prompt: str,
            doc: dict[str, Any],
            mode: str,
            first: bool,
            anthropic: bool,
        ) -> None:
            if state.gate is not None:
                state.gate.wait(60)
            if state.delay_s:
                time.sleep(state.delay_s)
            if mode == "slow":
                time.sleep(state.slow_s)
            if state.retry_after is not None:
                self._json(
                    429, {"error": {"message": "slow down"}}, {"Retry-After": state.retry_after}
                )
                return
            if mode == "500" or (mode == "500_once" and first):
                self._json(500, {"error": {"message": "the model is overloaded", "type": "server"}})
                return
            if mode == "429_once" and first:
                header = {"retry-after-ms": "20"} if anthropic else {"Retry-After": "0"}
                self._json(429, {"error": {"message": "rate limited"}}, header)
                return
            text = _reply_text(doc)
            tokens_in = max(1, len(prompt) // 4)
            if anthropic:
                content, stop = _anthropic_content(body, text)
                payload: dict[str, Any] = {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": stop,
                    "usage": {"input_tokens": tokens_in, "output_tokens": OUTPUT_TOKENS},
                }
            else:
                payload = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": tokens_in,
                        "completion_tokens": OUTPUT_TOKENS,
                        "total_tokens": tokens_in + OUTPUT_TOKENS,
                    },
                }
            self._json(200, payload)

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(payload).encode(), headers or {})

        def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(OSError):  # the client gave up (a timeout test)
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet tests
            return

    return Handler


@contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """Serve a fake language model on a free loopback port."""
    state = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    state.url = f"http://{host!s}:{port}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def serve_forever(delay_s: float) -> None:
    """Serve the fake on a free port in this process (benchmarks run it apart), printing its
    URL; ``GET /stamps`` answers the monotonic times of the requests received."""
    state = FakeLLM(delay_s=delay_s)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    server.request_queue_size = 128
    host, port = server.server_address[:2]
    print(f"http://{host!s}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    import sys

    serve_forever(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
