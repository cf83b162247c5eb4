"""What every MCP tool shares: the runtime, argument types, one session per call, refusals,
and the entry that registers a tool (its function and annotations)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, NamedTuple, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session, sessionmaker

from app.agents import flows as service
from app.agents.flows import Actor
from app.db import session_scope
from app.errors import RelevoError
from app.runs.manager import RunManager

__all__ = [
    "INSTRUCTIONS",
    "MAX_WAIT_S",
    "CaseId",
    "Ctx",
    "RatingArg",
    "RunId",
    "Runtime",
    "ToolEntry",
    "WaitS",
    "add_tools",
    "in_session",
    "read_only",
    "refusal",
    "runtime",
    "wait_for_runs",
]

T = TypeVar("T")
INSTRUCTIONS = (
    "Relevo measures search relevance. Tune a case honestly: list_cases, get_case, then "
    "propose_try with a draft query template or knobs (it runs them without changing the "
    "case and compares them with the current try on every metric, reporting a fixed "
    "held-out half of the queries apart), and apply_try the better one only when it holds "
    "on the held-out half. Scopes: read, run (runs, sweeps, proposals), write (ratings, "
    "apply_try), judge (language-model judge runs, which need a budget)."
)
MAX_WAIT_S = 600.0

CaseId = Annotated[int, Field(ge=1, le=2**31 - 1, description="The case's id (list_cases)")]
RunId = Annotated[int, Field(ge=1, le=2**31 - 1, description="A run's id (list_runs)")]
WaitS = Annotated[
    float,
    Field(ge=0, le=MAX_WAIT_S, description="Seconds to wait for the runs to end (at most 600)"),
]


class RatingArg(BaseModel):
    doc_id: str = Field(min_length=1, max_length=500)
    rating: float | None = Field(description="On the case scorer's scale; null clears")


@dataclass(frozen=True)
class Runtime:
    """Where the tools find the database, the run manager, and the caller's API key."""

    session_factory: Callable[[], sessionmaker[Session]]
    run_manager: Callable[[], RunManager]
    key_of: Callable[[Context[Any, Any] | None], str]


# The server hands its Runtime to every tool as the lifespan state of the tool's context.
Ctx = Context[Runtime, Any]


class ToolEntry(NamedTuple):
    """One tool as the server lists it: its function (name, docstring, typed parameters)
    and its annotations."""

    fn: Callable[..., Awaitable[Any]]
    annotations: ToolAnnotations | None = None


def add_tools(mcp: MCPServer[Runtime], entries: Iterable[ToolEntry]) -> None:
    """Register each entry's function as a tool, described by its cleaned docstring."""
    for entry in entries:
        # Cleaned, so a description reads the same whatever the function's indentation
        # (and whichever Python compiled it: 3.13 dedents docstrings itself).
        description = inspect.cleandoc(entry.fn.__doc__ or "")
        mcp.add_tool(entry.fn, description=description, annotations=entry.annotations)


def runtime(ctx: Ctx) -> Runtime:
    """Return the runtime the server was built with."""
    return ctx.request_context.lifespan_context


def refusal(exc: BaseException) -> ToolError:
    if isinstance(exc, RelevoError):
        return ToolError(exc.message)
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return ToolError(f"Invalid argument {where}: {first.get('msg')}")
    return ToolError(f"{type(exc).__name__}: {exc}")


async def in_session(ctx: Ctx, work: Callable[[Session, Actor], T]) -> T:
    """Run ``work`` with a session and the caller's actor, in a thread; errors are tool errors."""
    rt = runtime(ctx)

    def call() -> T:
        # One tool call, one transaction: committed when the work returns, rolled back if
        # it raises (the services it calls only flush).
        with session_scope(rt.session_factory()) as session:
            actor = service.actor_for_key(session=session, key=rt.key_of(ctx))
            return work(session, actor)

    try:
        return await asyncio.to_thread(call)
    except (RelevoError, ValidationError) as exc:
        raise refusal(exc) from exc


async def wait_for_runs(tasks: list[asyncio.Task[None]], wait_s: float) -> bool:
    """Wait up to ``wait_s`` for the runs' tasks; return whether they all ended."""
    if not tasks:
        return True
    # Shielded: a caller that stops waiting stops waiting, not the runs.
    gathered = asyncio.gather(*tasks, return_exceptions=True)
    try:
        await asyncio.wait_for(asyncio.shield(gathered), timeout=wait_s)
    except TimeoutError:
        return False
    return True


def read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)
