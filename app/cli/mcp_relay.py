"""`relevo mcp --url`: stdio in front of a Relevo server's /mcp, for a desktop client or a
coding agent on a machine without Relevo's database. Every tool call is the server's, made
with the key as its bearer token."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client

__all__ = ["relay"]


def _endpoint(url: str) -> str:
    base = url.rstrip("/")
    return base if base.endswith("/mcp") else base + "/mcp"


async def _serve(url: str, key: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with (
        http,
        streamable_http_client(_endpoint(url), http_client=http) as (read, write),
        ClientSession(read, write) as remote,
    ):
        await remote.initialize()

        async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
            return await remote.list_tools()

        async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await remote.call_tool(params.name, params.arguments or {})

        server: Server[Any] = Server(
            name="relevo", on_list_tools=list_tools, on_call_tool=call_tool
        )
        async with stdio_server() as (stdin, stdout):
            await server.run(stdin, stdout, server.create_initialization_options())


def relay(*, url: str, key: str) -> int:
    """Serve stdio, relaying every request to the Relevo server at ``url``."""
    try:
        asyncio.run(_serve(url, key))
    except Exception as exc:  # the remote refused or went away: say so on stderr
        print(f"error: the Relevo server at {url} could not be reached: {exc}", file=sys.stderr)
        return 1
    return 0
