"""Runs of a case."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.deps import CaseDep, SessionDep
from app.schemas.runs import RunCreate, RunDetail, RunStarted, RunSummary
from app.services import runs as service
from app.services.run_manager import RunManager
from app.vocabulary import RunStatus

router = APIRouter(prefix="/cases/{case_id}/runs", tags=["runs"])


@router.post("", status_code=202, response_model=RunDetail | RunStarted)
def start_run(
    case: CaseDep,
    session: SessionDep,
    request: Request,
    response: Response,
    body: RunCreate | None = None,
    wait: bool = False,
) -> RunDetail | RunStarted:
    """Start a run (202 with its id); with ?wait=true answer 200 with the finished run.

    With {"explain": true} the engine's explanation of every document's score is kept.
    """
    body = body or RunCreate()
    run = service.create_run(
        session=session, case=case, try_number=body.try_number, explain=body.explain
    )
    manager: RunManager = request.app.state.run_manager
    finished = manager.submit(run.id)
    if not wait:
        return RunStarted(id=run.id, status=RunStatus.QUEUED)
    run_id = run.id
    finished.result()
    # Read the run afresh: the case (and with it the run) may have been deleted meanwhile.
    session.expunge_all()
    response.status_code = 200
    return service.detail(session=session, run=service.finished_run(session=session, run_id=run_id))


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
    run = service.rescore_run(
        session=session, run=service.get_run(session=session, case=case, run_id=run_id)
    )
    return service.detail(session=session, run=run)
