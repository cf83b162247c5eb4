"""The tools that read a case: its runs, a comparison, a query's results, the engine's documents
(and start_run, which runs the case as it is)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field
from sqlalchemy.orm import Session

from app import access
from app.agents import flows as service
from app.agents.api.tooling import (
    CaseId,
    RunId,
    Runtime,
    WaitS,
    in_session,
    read_only,
    wait_for_runs,
)
from app.agents.flows import Actor
from app.cases import service as case_service
from app.endpoints import trying
from app.endpoints.schemas import TryRequest, TryResult
from app.runs import service as run_service
from app.vocabulary import Engine

__all__ = ["register"]

T = TypeVar("T")


def register(mcp: MCPServer[Any], rt: Runtime) -> None:
    """Add the case, run and query tools to the server."""

    def db(ctx: Context | None, work: Callable[[Session, Actor], T]) -> Awaitable[T]:
        return in_session(rt, ctx, work)

    @mcp.tool(annotations=read_only("List cases"))
    async def list_cases(ctx: Context) -> dict[str, Any]:
        """List the cases you may see, with each one's latest score and query count."""
        return await db(ctx, lambda s, a: service.list_cases(session=s, actor=a))

    @mcp.tool(annotations=read_only("Get a case"))
    async def get_case(case_id: CaseId, ctx: Context) -> dict[str, Any]:
        """A case's settings (current try), its latest run's scores per metric and tag, its
        rating coverage, its queries and which of them are held out."""
        return await db(ctx, lambda s, a: service.case_detail(session=s, actor=a, case_id=case_id))

    @mcp.tool(annotations=read_only("List runs"))
    async def list_runs(
        case_id: CaseId,
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
    ) -> dict[str, Any]:
        """A case's runs, newest first, with who started each (trigger, agent) and drafts."""
        return await db(
            ctx, lambda s, a: service.list_runs(session=s, actor=a, case_id=case_id, limit=limit)
        )

    @mcp.tool(annotations=read_only("Get a run"))
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
        ended = await wait_for_runs([rt.run_manager().start(run_id)], wait_s)

        def read(s: Session, a: Actor) -> dict[str, Any]:
            case = access.visible_case(session=s, user=a.user(s), case_id=case_id)
            run = run_service.get_run(session=s, case=case, run_id=run_id)
            return {"ended": ended, "run": run_service.summary(run).model_dump(mode="json")}

        return await db(ctx, read)

    @mcp.tool(annotations=read_only("Compare two runs"))
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

    @mcp.tool(annotations=read_only("Get a query's results"))
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

    @mcp.tool(annotations=read_only("Search documents"))
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
