"""The tools that spend or note: a judge run's estimate and start (scope judge), annotate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field
from sqlalchemy.orm import Session

from app import access
from app.agents import flows as service
from app.agents.api.tooling import (
    CaseId,
    Runtime,
    in_session,
    read_only,
)
from app.agents.flows import Actor
from app.errors import Invalid
from app.judges import launch as judge_launch
from app.judges.schemas import JudgeRunCreate

__all__ = ["register"]

T = TypeVar("T")


def register(mcp: MCPServer[Any], rt: Runtime) -> None:
    """Add the judging and annotation tools to the server."""

    def db(ctx: Context | None, work: Callable[[Session, Actor], T]) -> Awaitable[T]:
        return in_session(rt, ctx, work)

    @mcp.tool(annotations=read_only("Estimate a judge run"))
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
