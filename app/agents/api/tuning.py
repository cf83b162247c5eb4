"""The tools that tune a case: rate, propose a try (held-out half apart), apply it, sweep."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field
from sqlalchemy.orm import Session, sessionmaker

from app.agents import flows as service
from app.agents import proposals
from app.agents.api.tooling import (
    CaseId,
    Ctx,
    RatingArg,
    RunId,
    Runtime,
    ToolEntry,
    WaitS,
    in_session,
    runtime,
    wait_for_runs,
)
from app.agents.schemas import ProposalRead
from app.db import session_scope
from app.queries.schemas import RatingIn
from app.sweeps import service as sweep_service

__all__ = ["TOOLS"]

DraftTemplate = Annotated[
    str | None, Field(max_length=100_000, description="A draft template; null keeps the current")
]
DraftKnobs = Annotated[
    dict[str, float] | None,
    Field(description="Knob values of the draft; unlisted knobs keep the current ones"),
]


async def rate(
    case_id: CaseId,
    query_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
    ratings: Annotated[list[RatingArg], Field(min_length=1, max_length=500)],
    ctx: Ctx,
) -> dict[str, Any]:
    """Rate documents of a query (scope write); a null rating clears one. The latest run
    is re-scored at once."""
    given = [RatingIn(doc_id=r.doc_id, rating=r.rating) for r in ratings]
    return await in_session(
        ctx,
        lambda s, a: service.rate(
            session=s, actor=a, case_id=case_id, query_id=query_id, ratings=given
        ),
    )


async def propose_try(
    case_id: CaseId,
    ctx: Ctx,
    query_template: DraftTemplate = None,
    knobs: DraftKnobs = None,
    wait_s: WaitS = 120.0,
) -> ProposalRead:
    """Run a draft template and knobs as a run of the case without changing the case
    (scope run), and compare it with the current try on every metric. The fixed
    held-out half of the queries (chosen by the case, the same every time) is reported
    apart from the tuning half: a gain that does not hold there is not a gain."""
    draft = await in_session(
        ctx,
        lambda s, a: proposals.create_draft(
            session=s, actor=a, case_id=case_id, query_template=query_template, knobs=knobs or {}
        ),
    )
    manager = runtime(ctx).run_manager()
    await wait_for_runs([manager.start(i) for i in proposals.runs_to_start(draft)], wait_s)
    return await in_session(
        ctx,
        lambda s, a: proposals.proposal_report(
            session=s,
            actor=a,
            case_id=draft.case_id,
            base_run_id=draft.base_run_id,
            run_id=draft.draft_run_id,
        ),
    )


async def apply_try(
    case_id: CaseId, run_id: RunId, ctx: Ctx, confirm_partial: bool = False
) -> dict[str, Any]:
    """Make a proposed try (a run made by propose_try) the case's new try (scope write);
    its run becomes the case's latest without searching again."""
    return await in_session(
        ctx,
        lambda s, a: proposals.apply_try(
            session=s, actor=a, case_id=case_id, run_id=run_id, confirm_partial=confirm_partial
        ),
    )


async def start_sweep(
    case_id: CaseId,
    knobs: Annotated[
        dict[str, list[float]],
        Field(description="Values to try per knob of the current template", min_length=1),
    ],
    ctx: Ctx,
) -> dict[str, Any]:
    """Run every combination of knob values as runs of the case (scope run); the case is
    not changed. Follow it with list_runs and compare_runs."""
    _case_id, sweep_id = await in_session(
        ctx, lambda s, a: service.start_sweep(session=s, actor=a, case_id=case_id, grid=knobs)
    )
    key_name = await in_session(ctx, lambda s, a: a.key_name)
    _spawn_sweep(runtime(ctx), sweep_id=sweep_id, key_name=key_name)
    return await in_session(ctx, lambda s, a: service.sweep_summary(session=s, sweep_id=sweep_id))


def _spawn_sweep(rt: Runtime, *, sweep_id: int, key_name: str) -> None:
    """Run the sweep in the background, each of its runs marked as the agent's first."""
    manager = rt.run_manager()
    factory = rt.session_factory()

    async def start_run(run_id: int) -> None:
        await asyncio.to_thread(_mark_as_agent, factory, sweep_id=sweep_id, key_name=key_name)
        await manager.run(run_id)

    execute = (
        sweep_service.queue_sweep if manager.queue is not None else sweep_service.execute_sweep
    )
    manager.spawn(lambda: execute(session_factory=factory, sweep_id=sweep_id, start_run=start_run))


def _mark_as_agent(factory: sessionmaker[Session], *, sweep_id: int, key_name: str) -> None:
    with session_scope(factory) as session:
        service.sweep_runs_as_agent(session=session, sweep_id=sweep_id, key_name=key_name)


TOOLS = (
    ToolEntry(rate),
    ToolEntry(propose_try),
    ToolEntry(apply_try),
    ToolEntry(start_sweep),
)
