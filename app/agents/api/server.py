"""Relevo's tools over the Model Context Protocol (API.md "Agents"), on the official SDK.

One server, two transports: ``relevo mcp`` serves it on stdio, acting as the user of the
API key it is given; the app serves it over streamable HTTP at ``/mcp``, where each
request's bearer token is the key. Every tool has a JSON schema (from its typed
parameters) and answers structured content; a refused or failed call is a tool error
with a sentence, never the end of the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sqlalchemy.orm import Session, sessionmaker
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.agents import flows as service
from app.agents.api import judging, reading, tuning
from app.agents.api.tooling import INSTRUCTIONS, Runtime, add_tools
from app.errors import RelevoError

__all__ = ["McpEndpoint", "build_server", "http_server", "mount"]

MCP_PATH = "/mcp"


def build_server(rt: Runtime) -> MCPServer[Runtime]:
    """Return the MCP server with every tool of API.md "Agents"."""
    # WARNING: the SDK configures the root logger at this level when none is set up.
    mcp: MCPServer[Runtime] = MCPServer(
        name="relevo",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        log_level="WARNING",
        # The lifespan state is what each tool's context carries: here, the runtime.
        lifespan=lambda _server: contextlib.nullcontext(rt),
    )
    add_tools(mcp, (*reading.TOOLS, *tuning.TOOLS, *judging.TOOLS))
    return mcp


# Streamable HTTP on the app


def _bearer(headers: Any) -> str:
    header = str((headers or {}).get("authorization", "") or "")
    scheme, _, key = header.partition(" ")
    return key.strip() if scheme.lower() == "bearer" else ""


def _key_from_request(ctx: Context | None) -> str:
    return "" if ctx is None else _bearer(ctx.headers)


class McpEndpoint:
    """The ASGI endpoint of ``/mcp``: refuses a request without a live API key (401), then
    hands it to the app's MCP session manager."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = _bearer(headers)
        factory: sessionmaker[Session] = self.app.state.session_factory

        def check() -> None:
            with factory() as session:
                service.actor_for_key(session=session, key=key)

        manager: StreamableHTTPSessionManager | None = getattr(self.app.state, "mcp_http", None)
        try:
            await asyncio.to_thread(check)
        except RelevoError as exc:
            answer = JSONResponse(
                {"detail": exc.message}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
            await answer(scope, receive, send)
            return
        if manager is None:
            await JSONResponse({"detail": "The MCP server is not running."}, status_code=503)(
                scope, receive, send
            )
            return
        await manager.handle_request(scope, receive, send)


@contextlib.asynccontextmanager
async def http_server(app: FastAPI) -> AsyncIterator[None]:
    """Serve MCP over streamable HTTP while the app runs (one session manager per start)."""
    runtime = Runtime(
        session_factory=lambda: app.state.session_factory,
        run_manager=lambda: app.state.run_manager,
        key_of=_key_from_request,
    )
    server = build_server(runtime)
    # Stateless, JSON answers: any replica answers any request, and each request's own
    # bearer key says who is calling. Hosts are not checked: every request needs a key.
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    async with manager.run():
        app.state.mcp_http = manager
        try:
            yield
        finally:
            app.state.mcp_http = None


def mount(app: FastAPI) -> None:
    """Route ``/mcp`` (POST, GET, DELETE) to the MCP server."""
    # A Route whose endpoint is an ASGI object (not a function) hands it the raw request.
    app.router.routes.append(Route(MCP_PATH, McpEndpoint(app), methods=["GET", "POST", "DELETE"]))
