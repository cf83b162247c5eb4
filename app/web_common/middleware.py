"""ASGI middleware: request body size limits, security headers on every answer, and the
request's one transaction."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

import anyio.to_thread
from sqlalchemy.orm import Session
from starlette.datastructures import URL
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "REQUEST_SESSIONS",
    "BaseUrlMiddleware",
    "BodyLimitMiddleware",
    "SecurityHeadersMiddleware",
    "TransactionMiddleware",
]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
NO_STORE_PREFIXES = ("/account", "/login", "/api/v1/account")


# The ASGI scope's key of the request's database sessions (see get_session).
REQUEST_SESSIONS = "relevo.sessions"


class TransactionMiddleware:
    """Commit the request's sessions once its answer is known to be below 400, else roll
    them back, before the answer goes out: a request that answers 4xx or 5xx has changed
    nothing, and one that succeeded is committed when its client hears of it.

    A commit that fails (or whose after-commit work does) is raised before anything was
    sent, so the client gets a 500 instead of the success it would otherwise have seen.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sessions: list[Session] = []
        scope[REQUEST_SESSIONS] = sessions

        async def finishing(message: Message) -> None:
            if message["type"] == "http.response.start":
                await _finish(sessions, commit=int(message["status"]) < 400)
            await send(message)

        try:
            await self.app(scope, receive, finishing)
        finally:
            await _finish(sessions, commit=False)


async def _finish(sessions: list[Session], *, commit: bool) -> None:
    """Commit (or roll back) each session once, in a worker thread (they block)."""
    while sessions:
        session = sessions.pop(0)
        end = session.commit if commit else session.rollback
        await anyio.to_thread.run_sync(end)


class BodyLimitMiddleware:
    """Answer 413 {"detail"} when a request body is larger than its route's limit.

    ``large_paths`` are regular expressions of paths (uploads) that get ``large_limit``.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limit: int,
        large_limit: int,
        large_paths: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.limit = limit
        self.large_limit = large_limit
        self.large_paths = [re.compile(p) for p in large_paths]

    def limit_for(self, path: str) -> int:
        """Return the body size limit for a request path."""
        if any(p.fullmatch(path) for p in self.large_paths):
            return self.large_limit
        return self.limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query: bytes = scope.get("query_string", b"")
        if b"\x00" in query or b"%00" in query.lower():
            await _answer(send, 400, "The query string contains a NUL character.")
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _answer(send, 413, _message(limit))
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                # An HTTPException passes through FastAPI's body parsing unchanged.
                raise HTTPException(413, _message(limit))
            return message

        await self.app(scope, limited, send)


def _message(limit: int) -> str:
    return f"The request body is larger than {limit / 1_048_576:g} MB."


async def _answer(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SecurityHeadersMiddleware:
    """Add CSP, anti-framing, nosniff and referrer headers; no-store on account pages."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        extra = [
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"x-frame-options", b"DENY"),
        ]
        extra.append((b"content-security-policy", CSP.encode()))
        if path.startswith(NO_STORE_PREFIXES):
            extra.append((b"cache-control", b"no-store"))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                headers = list(message.get("headers", []))
                headers += [(k, v) for k, v in extra if k not in names or k == b"cache-control"]
                if b"cache-control" in names and path.startswith(NO_STORE_PREFIXES):
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class BaseUrlMiddleware:
    """Build every absolute URL (redirects, links) from the configured base URL, not Host."""

    def __init__(self, app: ASGIApp, *, base_url: str) -> None:
        self.app = app
        base = URL(base_url)
        self.scheme = base.scheme
        self.netloc = base.netloc.encode()
        self.root_path = base.path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope = {
                **scope,
                "scheme": self.scheme if scope["type"] == "http" else scope["scheme"],
                "headers": [*headers, (b"host", self.netloc)],
                "root_path": self.root_path,
            }
        await self.app(scope, receive, send)
