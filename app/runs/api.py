"""Runs of a case."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.cases.deps import CaseDep
from app.runs import launch, service
from app.runs import rescore as rescoring
from app.runs.deps import RunDep, RunManagerDep
from app.runs.schemas import RunCreate, RunDetail, RunStarted, RunSummary
from app.web_common.deps import SessionDep

# Runs started over the API (CI pipelines) say so; the case page's Run button says "user".
API_TRIGGER = "api"

router = APIRouter(prefix="/cases/{case_id}/runs", tags=["runs"])


@router.post("", status_code=202, response_model=RunDetail | RunStarted)
async def start_run(
    case: CaseDep,
    user: CurrentUser,
    session: SessionDep,
    manager: RunManagerDep,
    response: Response,
    body: RunCreate | None = None,
    wait: bool = False,
) -> RunDetail | RunStarted:
    """Start a run (202 with its id); with ?wait=true answer 200 with the finished run.

    With {"explain": true} the engine's explanation of every document's score is kept.
    A waiting request holds neither a thread nor a database connection; each user may
    have `RELEVO_MAX_WAITS_PER_USER` of them at once (429 with Retry-After beyond).
    """
    started = await launch.start_run(
        session=session,
        case=case,
        manager=manager,
        user_id=user.id,
        body=body or RunCreate(),
        trigger=API_TRIGGER,
        wait=wait,
    )
    if isinstance(started, RunDetail):
        response.status_code = 200
    return started


@router.post("/{run_id}/cancel", response_model=RunDetail)
def cancel_run(run: RunDep, session: SessionDep, manager: RunManagerDep) -> RunDetail:
    """Cancel a queued or running run (409 once it has ended); it stops within a second."""
    cancelled = launch.cancel_run(session=session, run=run, manager=manager)
    return service.detail(session=session, run=cancelled)


@router.get("", response_model=list[RunSummary])
def list_runs(case: CaseDep, session: SessionDep) -> list[RunSummary]:
    """Return the case's runs, newest first."""
    return [service.summary(r) for r in service.list_runs(session=session, case=case)]


@router.get("/{run_id}", response_model=RunDetail)
def get_run(run: RunDep, session: SessionDep) -> RunDetail:
    """Return a run with its progress and every query's outcome."""
    return service.detail(session=session, run=run)


@router.post("/{run_id}/rescore", response_model=RunDetail)
def rescore_run(run: RunDep, session: SessionDep) -> RunDetail:
    """Re-score the run's stored rankings with the current ratings, without refetching."""
    return service.detail(session=session, run=rescoring.rescore_run(session=session, run=run))
