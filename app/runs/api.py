"""Runs of a case."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, Request, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.accounts.deps import CaseDep, CurrentUser
from app.models import Case
from app.runs import rescore as rescoring
from app.runs import service
from app.runs.manager import RunManager
from app.runs.schemas import RunCreate, RunDetail, RunStarted, RunSummary
from app.vocabulary import RunStatus
from app.web_common.deps import SessionDep

# Runs started over the API (CI pipelines) say so; the case page's Run button says "user".
API_TRIGGER = "api"

router = APIRouter(prefix="/cases/{case_id}/runs", tags=["runs"])


@router.post("", status_code=202, response_model=RunDetail | RunStarted)
async def start_run(
    case: CaseDep,
    user: CurrentUser,
    session: SessionDep,
    request: Request,
    response: Response,
    body: RunCreate | None = None,
    wait: bool = False,
) -> RunDetail | RunStarted:
    """Start a run (202 with its id); with ?wait=true answer 200 with the finished run.

    With {"explain": true} the engine's explanation of every document's score is kept.
    A waiting request holds neither a thread nor a database connection; each user may
    have `RELEVO_MAX_WAITS_PER_USER` of them at once (429 with Retry-After beyond).
    """
    body = body or RunCreate()
    manager: RunManager = request.app.state.run_manager
    with manager.wait_slot(user.id) if wait else contextlib.nullcontext():
        run_id = await run_in_threadpool(_create, session, case, body)
        task = manager.start(run_id)
        if not wait:
            return RunStarted(id=run_id, status=RunStatus.QUEUED)
        # A client that goes away stops waiting, not the run.
        await asyncio.shield(task)
    response.status_code = 200
    return await run_in_threadpool(_finished_detail, session, run_id)


def _create(session: Session, case: Case, body: RunCreate) -> int:
    run = service.create_run(
        session=session,
        case=case,
        try_number=body.try_number,
        explain=body.explain,
        trigger=API_TRIGGER,
    )
    run_id = run.id
    session.close()  # back to the pool while the run goes on
    return run_id


def _finished_detail(session: Session, run_id: int) -> RunDetail:
    # Read afresh: the case (and with it the run) may have been deleted meanwhile (404).
    return service.detail(session=session, run=service.finished_run(session=session, run_id=run_id))


@router.post("/{run_id}/cancel", response_model=RunDetail)
def cancel_run(request: Request, run_id: int, case: CaseDep, session: SessionDep) -> RunDetail:
    """Cancel a queued or running run (409 once it has ended); it stops within a second."""
    run = service.cancel_run(
        session=session, run=service.get_run(session=session, case=case, run_id=run_id)
    )
    request.app.state.run_manager.cancelled(run.id)
    return service.detail(session=session, run=run)


@router.get("", response_model=list[RunSummary])
def list_runs(case: CaseDep, session: SessionDep) -> list[RunSummary]:
    """Return the case's runs, newest first."""
    return [service.summary(r) for r in service.list_runs(session=session, case=case)]


@router.get("/{run_id}", response_model=RunDetail)
def get_run(run_id: int, case: CaseDep, session: SessionDep) -> RunDetail:
    """Return a run with its progress and every query's outcome."""
    return service.detail(
        session=session, run=service.get_run(session=session, case=case, run_id=run_id)
    )


@router.post("/{run_id}/rescore", response_model=RunDetail)
def rescore_run(run_id: int, case: CaseDep, session: SessionDep) -> RunDetail:
    """Re-score the run's stored rankings with the current ratings, without refetching."""
    run = rescoring.rescore_run(
        session=session, run=service.get_run(session=session, case=case, run_id=run_id)
    )
    return service.detail(session=session, run=run)
