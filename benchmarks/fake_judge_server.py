"""A lean fake OpenAI chat-completions server for benchmarks/judges.py (asyncio, no threads).

Answers every POST after ``delay`` seconds with a rating of 1 and OpenAI-shaped usage;
``GET /stamps`` returns the monotonic times the POSTs arrived. The tests' fake
(tests/judges/fake_llm.py) scripts failures; this one only needs to be cheap, so that the
benchmark measures Relevo rather than the fake.

    python benchmarks/fake_judge_server.py 0.1   # prints its URL, serves until killed
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

STAMPS: list[float] = []


def _answer(body: bytes) -> bytes:
    prompt = str(json.loads(body)["messages"][-1]["content"])
    reply = json.dumps({"rating": 1, "explanation": "fake"})
    return json.dumps(
        {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": 12},
        }
    ).encode()


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            method = head[0].split(" ", 1)[0]
            length = next(
                (
                    int(h.split(":", 1)[1])
                    for h in head[1:]
                    if h.lower().startswith("content-length:")
                ),
                0,
            )
            body = await reader.readexactly(length) if length else b""
            if method == "GET":
                data = json.dumps(STAMPS).encode()
            else:
                STAMPS.append(time.monotonic())
                await asyncio.sleep(delay)
                data = _answer(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(delay: float) -> None:
    """Serve on a free loopback port until killed, printing the URL first."""
    server = await asyncio.start_server(lambda r, w: _serve(r, w, delay), "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.1))
