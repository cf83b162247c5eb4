"""The tools that spend or note: a judge run's estimate and start (scope judge), annotate."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from app import access
from app.agents import flows as service
from app.agents.api.tooling import CaseId, Ctx, ToolEntry, in_session, read_only, runtime
from app.agents.flows import Actor
from app.errors import Invalid
from app.judges import launch as judge_launch
from app.judges.schemas import JudgeRunCreate
from app.runs.manager import RunManager

__all__ = ["TOOLS"]

BookId = Annotated[int, Field(ge=1, le=2**31 - 1)]
JudgeId = Annotated[int, Field(ge=1, le=2**31 - 1)]
Pairs = Literal["unjudged", "all", "failed"]
Limit = Annotated[int | None, Field(ge=1, le=1_000_000)]
BudgetUsd = Annotated[float | None, Field(gt=0, le=1_000_000)]
BudgetTokens = Annotated[int | None, Field(gt=0, le=10_000_000_000)]


async def judge_estimate(
    book_id: BookId, judge_id: JudgeId, ctx: Ctx, pairs: Pairs = "unjudged", limit: Limit = None
) -> dict[str, Any]:
    """What a language-model judge run of a book would ask and cost (scope judge);
    nothing is sent."""
    return await in_session(
        ctx,
        lambda s, a: _estimate(s, a, book_id=book_id, judge_id=judge_id, pairs=pairs, limit=limit),
    )


def _estimate(
    s: Session, a: Actor, *, book_id: int, judge_id: int, pairs: Pairs, limit: int | None
) -> dict[str, Any]:
    service.require(a, "judge")
    user = a.user(s)
    book = access.visible_book(session=s, user=user, book_id=book_id)
    body = JudgeRunCreate(judge_id=judge_id, pairs=pairs, limit=limit)
    return judge_launch.estimate(session=s, user=user, book=book, body=body).model_dump(mode="json")


async def start_judge_run(
    book_id: BookId,
    judge_id: JudgeId,
    ctx: Ctx,
    budget_usd: BudgetUsd = None,
    budget_tokens: BudgetTokens = None,
    pairs: Pairs = "unjudged",
    limit: Limit = None,
) -> dict[str, Any]:
    """Start a language-model judge run of a book (scope judge). A budget is required:
    budget_usd or budget_tokens; the run stops when it is spent."""
    # The arguments carry the body's own bounds, so building it here cannot fail.
    body = JudgeRunCreate(
        judge_id=judge_id,
        pairs=pairs,
        limit=limit,
        budget_usd=budget_usd,
        budget_tokens=budget_tokens,
    )
    manager = runtime(ctx).run_manager()
    return await in_session(
        ctx, lambda s, a: _start(s, a, manager=manager, book_id=book_id, body=body)
    )


def _start(
    s: Session, a: Actor, *, manager: RunManager, book_id: int, body: JudgeRunCreate
) -> dict[str, Any]:
    service.require(a, "judge")
    if body.budget_usd is None and body.budget_tokens is None:
        raise Invalid(
            "budget_usd",
            "start_judge_run needs a budget: give budget_usd or budget_tokens "
            "(judge_estimate says what the run would cost).",
        )
    user = a.user(s)
    book = access.visible_book(session=s, user=user, book_id=book_id)
    read = judge_launch.start(session=s, manager=manager, user=user, book=book, body=body)
    service.mark_judge_run(session=s, run_id=read.id, key_name=a.key_name)
    return {**read.model_dump(mode="json"), "agent": a.key_name}


async def annotate(
    case_id: CaseId,
    text: Annotated[str, Field(min_length=1, max_length=1900)],
    ctx: Ctx,
    run_id: Annotated[int | None, Field(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    """Add a note to the case's timeline (on a run, or now), marked as this agent's."""
    return await in_session(
        ctx,
        lambda s, a: service.annotate(
            session=s, actor=a, case_id=case_id, text=text, run_id=run_id
        ),
    )


TOOLS = (
    ToolEntry(judge_estimate, read_only("Estimate a judge run")),
    ToolEntry(start_judge_run),
    ToolEntry(annotate),
)
