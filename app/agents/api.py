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
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from fastapi import FastAPI
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session, sessionmaker
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app import access
from app.agents import service
from app.agents.schemas import ProposalRead
from app.agents.service import Actor
from app.cases import service as case_service
from app.db import session_scope
from app.endpoints import trying
from app.endpoints.schemas import TryRequest, TryResult
from app.errors import Invalid, RelevoError
from app.judges import launch as judge_launch
from app.judges.schemas import JudgeRunCreate
from app.queries.schemas import RatingIn
from app.runs import service as run_service
from app.runs.manager import RunManager
from app.sweeps import service as sweep_service
from app.vocabulary import Engine

__all__ = ["McpEndpoint", "Runtime", "build_server", "http_server", "mount"]

T = TypeVar("T")
MCP_PATH = "/mcp"
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
    key_of: Callable[[Context | None], str]


def _refusal(exc: BaseException) -> ToolError:
    if isinstance(exc, RelevoError):
        return ToolError(exc.message)
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return ToolError(f"Invalid argument {where}: {first.get('msg')}")
    return ToolError(f"{type(exc).__name__}: {exc}")


async def _db(rt: Runtime, ctx: Context | None, work: Callable[[Session, Actor], T]) -> T:
    """Run ``work`` with a session and the caller's actor, in a thread; errors are tool errors."""

    def call() -> T:
        # One tool call, one transaction: committed when the work returns, rolled back if
        # it raises (the services it calls only flush).
        with session_scope(rt.session_factory()) as session:
            actor = service.actor_for_key(session=session, key=rt.key_of(ctx))
            return work(session, actor)

    try:
        return await asyncio.to_thread(call)
    except (RelevoError, ValidationError) as exc:
        raise _refusal(exc) from exc


async def _wait(tasks: list[asyncio.Task[None]], wait_s: float) -> bool:
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


def _read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)


def build_server(rt: Runtime) -> MCPServer[Any]:
    """Return the MCP server with every tool of API.md "Agents"."""
    # WARNING: the SDK configures the root logger at this level when none is set up.
    mcp: MCPServer[Any] = MCPServer(
        name="relevo", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )

    def db(ctx: Context | None, work: Callable[[Session, Actor], T]) -> Awaitable[T]:
        return _db(rt, ctx, work)

    @mcp.tool(annotations=_read_only("List cases"))
    async def list_cases(ctx: Context) -> dict[str, Any]:
        """List the cases you may see, with each one's latest score and query count."""
        return await db(ctx, lambda s, a: service.list_cases(session=s, actor=a))

    @mcp.tool(annotations=_read_only("Get a case"))
    async def get_case(case_id: CaseId, ctx: Context) -> dict[str, Any]:
        """A case's settings (current try), its latest run's scores per metric and tag, its
        rating coverage, its queries and which of them are held out."""
        return await db(ctx, lambda s, a: service.case_detail(session=s, actor=a, case_id=case_id))

    @mcp.tool(annotations=_read_only("List runs"))
    async def list_runs(
        case_id: CaseId,
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
    ) -> dict[str, Any]:
        """A case's runs, newest first, with who started each (trigger, agent) and drafts."""
        return await db(
            ctx, lambda s, a: service.list_runs(session=s, actor=a, case_id=case_id, limit=limit)
        )

    @mcp.tool(annotations=_read_only("Get a run"))
    async def get_run(case_id: CaseId, run_id: RunId, ctx: Context) -> dict[str, Any]:
        """One run with every query's outcome: status, score per metric, ranked docs."""
        return await db(
            ctx,
            lambda s, a: service.run_detail(session=s, actor=a, case_id=case_id, run_id=run_id),
        )

    @mcp.tool()
    async def start_run(case_id: CaseId, ctx: Context, wait_s: WaitS = 60.0) -> dict[str, Any]:
        """Run the case's current try (scope run); wait up to wait_s seconds for it to end."""
        run_id = await db(ctx, lambda s, a: service.start_run(session=s, actor=a, case_id=case_id))
        ended = await _wait([rt.run_manager().start(run_id)], wait_s)

        def read(s: Session, a: Actor) -> dict[str, Any]:
            case = access.visible_case(session=s, user=a.user(s), case_id=case_id)
            run = run_service.get_run(session=s, case=case, run_id=run_id)
            return {"ended": ended, "run": run_service.summary(run).model_dump(mode="json")}

        return await db(ctx, read)

    @mcp.tool(annotations=_read_only("Compare two runs"))
    async def compare_runs(
        case_id: CaseId, base_run_id: RunId, other_run_id: RunId, ctx: Context
    ) -> dict[str, Any]:
        """Compare two runs of a case under today's ratings: per-query changes, paired tests,
        every metric with Holm's correction, and the verdict."""
        comparison = await db(
            ctx,
            lambda s, a: service.compare(
                session=s,
                actor=a,
                case_id=case_id,
                base_run_id=base_run_id,
                other_run_id=other_run_id,
            ),
        )
        return comparison.model_dump(mode="json")

    @mcp.tool(annotations=_read_only("Get a query's results"))
    async def get_query_results(
        case_id: CaseId,
        query_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        ctx: Context,
        run_id: Annotated[int | None, Field(ge=1, le=2**31 - 1)] = None,
    ) -> dict[str, Any]:
        """One query's ranked docs in a run (default the case's latest) with their ratings."""
        return await db(
            ctx,
            lambda s, a: service.query_results(
                session=s, actor=a, case_id=case_id, query_id=query_id, run_id=run_id
            ),
        )

    @mcp.tool(annotations=_read_only("Search documents"))
    async def search_documents(
        case_id: CaseId,
        query_text: Annotated[str, Field(min_length=1, max_length=2000)],
        ctx: Context,
        rows: Annotated[int, Field(ge=1, le=100)] = 10,
        query_template: Annotated[str | None, Field(max_length=100_000)] = None,
    ) -> dict[str, Any]:
        """Search the case's engine (scope run) with its current template (or a draft one),
        to find documents to rate. Nothing is stored."""

        def plan(s: Session, a: Actor) -> tuple[Any, TryRequest, int]:
            service.require(a, "run")
            case = access.visible_case(session=s, user=a.user(s), case_id=case_id)
            current = case_service.current_try(session=s, case=case)
            endpoint = access.visible_endpoint(
                session=s, user=a.user(s), endpoint_id=current.search_endpoint_id
            )
            body = TryRequest(
                query_text=query_text,
                template=query_template or current.query_template,
                field_spec=current.field_spec,
                rows=rows,
            )
            if endpoint.engine == Engine.STATIC:
                return trying.try_static(session=s, endpoint=endpoint, body=body), body, a.user_id
            s.expunge(endpoint)
            return endpoint, body, a.user_id

        found, body, user_id = await db(ctx, plan)
        result = (
            found
            if isinstance(found, TryResult)
            else await trying.try_endpoint(endpoint=found, body=body, user_id=user_id)
        )
        return result.model_dump(mode="json", exclude={"raw"})

    @mcp.tool()
    async def rate(
        case_id: CaseId,
        query_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        ratings: Annotated[list[RatingArg], Field(min_length=1, max_length=500)],
        ctx: Context,
    ) -> dict[str, Any]:
        """Rate documents of a query (scope write); a null rating clears one. The latest run
        is re-scored at once."""
        given = [RatingIn(doc_id=r.doc_id, rating=r.rating) for r in ratings]
        return await db(
            ctx,
            lambda s, a: service.rate(
                session=s, actor=a, case_id=case_id, query_id=query_id, ratings=given
            ),
        )

    @mcp.tool()
    async def propose_try(
        case_id: CaseId,
        ctx: Context,
        query_template: Annotated[
            str | None,
            Field(max_length=100_000, description="A draft template; null keeps the current"),
        ] = None,
        knobs: Annotated[
            dict[str, float] | None,
            Field(description="Knob values of the draft; unlisted knobs keep the current ones"),
        ] = None,
        wait_s: WaitS = 120.0,
    ) -> ProposalRead:
        """Run a draft template and knobs as a run of the case without changing the case
        (scope run), and compare it with the current try on every metric. The fixed
        held-out half of the queries (chosen by the case, the same every time) is reported
        apart from the tuning half: a gain that does not hold there is not a gain."""
        draft = await db(
            ctx,
            lambda s, a: service.create_draft(
                session=s,
                actor=a,
                case_id=case_id,
                query_template=query_template,
                knobs=knobs or {},
            ),
        )
        manager = rt.run_manager()
        await _wait([manager.start(i) for i in service.runs_to_start(draft)], wait_s)
        return await db(
            ctx,
            lambda s, a: service.proposal_report(
                session=s,
                actor=a,
                case_id=draft.case_id,
                base_run_id=draft.base_run_id,
                run_id=draft.draft_run_id,
            ),
        )

    @mcp.tool()
    async def apply_try(
        case_id: CaseId, run_id: RunId, ctx: Context, confirm_partial: bool = False
    ) -> dict[str, Any]:
        """Make a proposed try (a run made by propose_try) the case's new try (scope write);
        its run becomes the case's latest without searching again."""
        return await db(
            ctx,
            lambda s, a: service.apply_try(
                session=s, actor=a, case_id=case_id, run_id=run_id, confirm_partial=confirm_partial
            ),
        )

    @mcp.tool()
    async def start_sweep(
        case_id: CaseId,
        knobs: Annotated[
            dict[str, list[float]],
            Field(description="Values to try per knob of the current template", min_length=1),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        """Run every combination of knob values as runs of the case (scope run); the case is
        not changed. Follow it with list_runs and compare_runs."""
        _case_id, sweep_id = await db(
            ctx,
            lambda s, a: service.start_sweep(session=s, actor=a, case_id=case_id, grid=knobs),
        )
        manager = rt.run_manager()
        factory = rt.session_factory()
        name = await db(ctx, lambda s, a: a.key_name)

        async def mark_as_agent(run_id: int) -> None:
            def mark() -> None:
                with session_scope(factory) as session:
                    service.sweep_runs_as_agent(session=session, sweep_id=sweep_id, key_name=name)

            await asyncio.to_thread(mark)
            await manager.run(run_id)

        execute = (
            sweep_service.queue_sweep if manager.queue is not None else sweep_service.execute_sweep
        )
        manager.spawn(
            lambda: execute(session_factory=factory, sweep_id=sweep_id, start_run=mark_as_agent)
        )
        return await db(ctx, lambda s, a: service.sweep_summary(session=s, sweep_id=sweep_id))

    @mcp.tool(annotations=_read_only("Estimate a judge run"))
    async def judge_estimate(
        book_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        judge_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        ctx: Context,
        pairs: Literal["unjudged", "all", "failed"] = "unjudged",
        limit: Annotated[int | None, Field(ge=1, le=1_000_000)] = None,
    ) -> dict[str, Any]:
        """What a language-model judge run of a book would ask and cost (scope judge);
        nothing is sent."""

        def work(s: Session, a: Actor) -> dict[str, Any]:
            service.require(a, "judge")
            user = a.user(s)
            book = access.visible_book(session=s, user=user, book_id=book_id)
            body = JudgeRunCreate(judge_id=judge_id, pairs=pairs, limit=limit)
            estimate = judge_launch.estimate(session=s, user=user, book=book, body=body)
            return estimate.model_dump(mode="json")

        return await db(ctx, work)

    @mcp.tool()
    async def start_judge_run(
        book_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        judge_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
        ctx: Context,
        budget_usd: Annotated[float | None, Field(gt=0, le=1_000_000)] = None,
        budget_tokens: Annotated[int | None, Field(gt=0, le=10_000_000_000)] = None,
        pairs: Literal["unjudged", "all", "failed"] = "unjudged",
        limit: Annotated[int | None, Field(ge=1, le=1_000_000)] = None,
    ) -> dict[str, Any]:
        """Start a language-model judge run of a book (scope judge). A budget is required:
        budget_usd or budget_tokens; the run stops when it is spent."""
        manager = rt.run_manager()

        def work(s: Session, a: Actor) -> dict[str, Any]:
            service.require(a, "judge")
            if budget_usd is None and budget_tokens is None:
                raise Invalid(
                    "budget_usd",
                    "start_judge_run needs a budget: give budget_usd or budget_tokens "
                    "(judge_estimate says what the run would cost).",
                )
            user = a.user(s)
            book = access.visible_book(session=s, user=user, book_id=book_id)
            body = JudgeRunCreate(
                judge_id=judge_id,
                pairs=pairs,
                limit=limit,
                budget_usd=budget_usd,
                budget_tokens=budget_tokens,
            )
            read = judge_launch.start(session=s, manager=manager, user=user, book=book, body=body)
            service.mark_judge_run(session=s, run_id=read.id, key_name=a.key_name)
            return {**read.model_dump(mode="json"), "agent": a.key_name}

        return await db(ctx, work)

    @mcp.tool()
    async def annotate(
        case_id: CaseId,
        text: Annotated[str, Field(min_length=1, max_length=1900)],
        ctx: Context,
        run_id: Annotated[int | None, Field(ge=1, le=2**31 - 1)] = None,
    ) -> dict[str, Any]:
        """Add a note to the case's timeline (on a run, or now), marked as this agent's."""
        return await db(
            ctx,
            lambda s, a: service.annotate(
                session=s, actor=a, case_id=case_id, text=text, run_id=run_id
            ),
        )

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
