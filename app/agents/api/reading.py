"""The tools that read a case: its runs, a comparison, a query's results, the engine's documents
(and start_run, which runs the case as it is)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from sqlalchemy.orm import Session

from app import access
from app.agents import flows as service
from app.agents.api.tooling import (
    CaseId,
    Ctx,
    RunId,
    ToolEntry,
    WaitS,
    in_session,
    read_only,
    runtime,
    wait_for_runs,
)
from app.agents.flows import Actor
from app.cases import service as case_service
from app.endpoints import trying
from app.endpoints.schemas import TryRequest, TryResult
from app.runs import service as run_service
from app.search import adapter_for

__all__ = ["TOOLS"]


async def list_cases(ctx: Ctx) -> dict[str, Any]:
    """List the cases you may see, with each one's latest score and query count."""
    return await in_session(ctx, lambda s, a: service.list_cases(session=s, actor=a))


async def get_case(case_id: CaseId, ctx: Ctx) -> dict[str, Any]:
    """A case's settings (current try), its latest run's scores per metric and tag, its
    rating coverage, its queries and which of them are held out."""
    return await in_session(
        ctx, lambda s, a: service.case_detail(session=s, actor=a, case_id=case_id)
    )


async def list_runs(
    case_id: CaseId, ctx: Ctx, limit: Annotated[int, Field(ge=1, le=200)] = 20
) -> dict[str, Any]:
    """A case's runs, newest first, with who started each (trigger, agent) and drafts."""
    return await in_session(
        ctx, lambda s, a: service.list_runs(session=s, actor=a, case_id=case_id, limit=limit)
    )


async def get_run(case_id: CaseId, run_id: RunId, ctx: Ctx) -> dict[str, Any]:
    """One run with every query's outcome: status, score per metric, ranked docs."""
    return await in_session(
        ctx, lambda s, a: service.run_detail(session=s, actor=a, case_id=case_id, run_id=run_id)
    )


async def start_run(case_id: CaseId, ctx: Ctx, wait_s: WaitS = 60.0) -> dict[str, Any]:
    """Run the case's current try (scope run); wait up to wait_s seconds for it to end."""
    run_id = await in_session(
        ctx, lambda s, a: service.start_run(session=s, actor=a, case_id=case_id)
    )
    ended = await wait_for_runs([runtime(ctx).run_manager().start(run_id)], wait_s)
    run = await in_session(ctx, lambda s, a: _run_summary(s, a, case_id=case_id, run_id=run_id))
    return {"ended": ended, "run": run}


def _run_summary(s: Session, a: Actor, *, case_id: int, run_id: int) -> dict[str, Any]:
    case = access.visible_case(session=s, user=a.user(s), case_id=case_id)
    run = run_service.get_run(session=s, case=case, run_id=run_id)
    return run_service.summary(run).model_dump(mode="json")


async def compare_runs(
    case_id: CaseId, base_run_id: RunId, other_run_id: RunId, ctx: Ctx
) -> dict[str, Any]:
    """Compare two runs of a case under today's ratings: per-query changes, paired tests,
    every metric with Holm's correction, and the verdict."""
    comparison = await in_session(
        ctx,
        lambda s, a: service.compare(
            session=s, actor=a, case_id=case_id, base_run_id=base_run_id, other_run_id=other_run_id
        ),
    )
    return comparison.model_dump(mode="json")


async def get_query_results(
    case_id: CaseId,
    query_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
    ctx: Ctx,
    run_id: Annotated[int | None, Field(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    """One query's ranked docs in a run (default the case's latest) with their ratings."""
    return await in_session(
        ctx,
        lambda s, a: service.query_results(
            session=s, actor=a, case_id=case_id, query_id=query_id, run_id=run_id
        ),
    )


async def search_documents(
    case_id: CaseId,
    query_text: Annotated[str, Field(min_length=1, max_length=2000)],
    ctx: Ctx,
    rows: Annotated[int, Field(ge=1, le=100)] = 10,
    query_template: Annotated[str | None, Field(max_length=100_000)] = None,
) -> dict[str, Any]:
    """Search the case's engine (scope run) with its current template (or a draft one),
    to find documents to rate. Nothing is stored."""
    found, body, user_id = await in_session(
        ctx,
        lambda s, a: _plan_search(
            s, a, case_id=case_id, query_text=query_text, rows=rows, template=query_template
        ),
    )
    result = (
        found
        if isinstance(found, TryResult)
        else await trying.try_endpoint(endpoint=found, body=body, user_id=user_id)
    )
    return result.model_dump(mode="json", exclude={"raw"})


def _plan_search(
    s: Session, a: Actor, *, case_id: int, query_text: str, rows: int, template: str | None
) -> tuple[Any, TryRequest, int]:
    """Return the search's answer if it needs no network (a static engine), else the
    endpoint (detached) to search; with the request and the caller's user id."""
    service.require(a, "run")
    case = access.visible_case(session=s, user=a.user(s), case_id=case_id)
    current = case_service.current_try(session=s, case=case)
    endpoint = access.visible_endpoint(
        session=s, user=a.user(s), endpoint_id=current.search_endpoint_id
    )
    body = TryRequest(
        query_text=query_text,
        template=template or current.query_template,
        field_spec=current.field_spec,
        rows=rows,
    )
    if adapter_for(endpoint.engine).answers_from_file:
        return trying.try_static(session=s, endpoint=endpoint, body=body), body, a.user_id
    s.expunge(endpoint)
    return endpoint, body, a.user_id


TOOLS = (
    ToolEntry(list_cases, read_only("List cases")),
    ToolEntry(get_case, read_only("Get a case")),
    ToolEntry(list_runs, read_only("List runs")),
    ToolEntry(get_run, read_only("Get a run")),
    ToolEntry(start_run),
    ToolEntry(compare_runs, read_only("Compare two runs")),
    ToolEntry(get_query_results, read_only("Get a query's results")),
    ToolEntry(search_documents, read_only("Search documents")),
)
