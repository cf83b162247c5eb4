"""Knob sweeps of a case: a grid of knob values, each combination an ordinary run."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.cases import service as case_service
from app.cases.deps import CaseDep
from app.cases.schemas import CaseRead
from app.runs.deps import RunManagerDep
from app.sweeps import results, service
from app.sweeps.deps import SweepDep
from app.sweeps.schemas import SweepApply, SweepCreate, SweepRead, SweepStarted
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases/{case_id}/sweeps", tags=["sweeps"])


@router.post("", status_code=202, response_model=SweepRead | SweepStarted)
def start_sweep(
    case: CaseDep,
    session: SessionDep,
    manager: RunManagerDep,
    response: Response,
    body: SweepCreate,
    wait: bool = False,
) -> SweepRead | SweepStarted:
    """Start a sweep (202 with its id); with ?wait=true answer 200 with the finished sweep."""
    started = service.start_sweep(session=session, case=case, body=body, manager=manager, wait=wait)
    if isinstance(started, SweepRead):
        response.status_code = 200
    return started


@router.get("/{sweep_id}", response_model=SweepRead, name="sweep_json")
def get_sweep(sweep: SweepDep, case: CaseDep, session: SessionDep) -> SweepRead:
    """Return the sweep's progress, each combination's run and score, and the best one."""
    return results.read_sweep(session=session, sweep=sweep)


@router.post("/{sweep_id}/cancel", response_model=SweepRead)
def cancel_sweep(sweep: SweepDep, case: CaseDep, session: SessionDep) -> SweepRead:
    """Stop the sweep after its current run."""
    return results.read_sweep(
        session=session, sweep=service.cancel_sweep(session=session, sweep=sweep)
    )


@router.post("/{sweep_id}/apply", response_model=CaseRead)
def apply_sweep(
    sweep: SweepDep, body: SweepApply, case: CaseDep, user: CurrentUser, session: SessionDep
) -> CaseRead:
    """Set the case's knobs to one combination of the sweep: a new try (409 for a partial
    run unless `confirm_partial`)."""
    updated = service.apply_sweep(
        session=session,
        user=user,
        case=case,
        sweep=sweep,
        run_id=body.run_id,
        confirm_partial=body.confirm_partial,
    )
    return case_service.to_read(session=session, case=updated)
