"""`relevo mcp`: Relevo's tools over the Model Context Protocol on stdio, for desktop
clients and coding agents, acting as the user whose API key it is given."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

from app.agents import flows as service
from app.agents.api import Runtime, build_server
from app.cli.database import session_factory
from app.config import Settings
from app.errors import RelevoError
from app.runs.manager import RunManager

__all__ = ["register"]

KEY_ENV = "RELEVO_API_KEY"


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    key = (args.key or os.environ.get(KEY_ENV, "")).strip()
    if not key:
        print(f"error: give an API key: {KEY_ENV}=... or --key.", file=sys.stderr)
        return 2
    if args.url:
        from app.cli.mcp_relay import relay

        return relay(url=args.url, key=key)
    # Stdout carries the protocol only: whatever opening the database says goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        factory = session_factory(settings)
        try:
            with factory() as session:
                actor = service.actor_for_key(session=session, key=key)
        except RelevoError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
    print(
        f"relevo mcp: serving on stdio as the key {actor.key_name!r} "
        f"(scopes: {', '.join(actor.scopes)})",
        file=sys.stderr,
    )

    async def serve() -> None:
        manager = RunManager(session_factory=factory, loop=asyncio.get_running_loop())
        runtime = Runtime(
            session_factory=lambda: factory,
            run_manager=lambda: manager,
            key_of=lambda _ctx: key,
        )
        try:
            await build_server(runtime).run_stdio_async()
        finally:
            await manager.aclose()

    asyncio.run(serve())
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `relevo mcp` to the relevo parser."""
    mcp = sub.add_parser(
        "mcp",
        help="serve Relevo's tools over MCP on stdio (for desktop clients and coding agents)",
    )
    mcp.add_argument("--key", default=None, help=f"the API key to act with (default: ${KEY_ENV})")
    mcp.add_argument(
        "--url",
        default=None,
        help="a Relevo server to act on (its /mcp, with the key as bearer token) instead of "
        "this machine's database",
    )
    mcp.set_defaults(func=cmd_mcp)
