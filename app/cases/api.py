"""Cases and their tries."""

from __future__ import annotations

from fastapi import APIRouter

from app import access
from app.cases import flows as case_updates
from app.cases import service
from app.cases.schemas import CaseCreate, CaseRead, CaseUpdate, TryRead
from app.teams import service as teams
from app.web_common.deps import CaseDep, CurrentUser, SessionDep

router = APIRouter(prefix="/cases", tags=["cases"])


@router.get("", response_model=list[CaseRead])
def list_cases(user: CurrentUser, session: SessionDep) -> list[CaseRead]:
    """Return the caller's cases with their latest score."""
    return service.list_reads(session=session, user=user)


@router.post("", response_model=CaseRead, status_code=201)
def create_case(body: CaseCreate, user: CurrentUser, session: SessionDep) -> CaseRead:
    """Create a case with its first try."""
    case = service.create_case(session=session, user=user, body=body)
    return service.to_read(session=session, case=case)


@router.get("/{case_id}", response_model=CaseRead)
def get_case(case: CaseDep, session: SessionDep) -> CaseRead:
    """Return one case with its current try's settings."""
    return service.to_read(session=session, case=case)


@router.patch("/{case_id}", response_model=CaseRead)
def update_case(
    body: CaseUpdate, case: CaseDep, user: CurrentUser, session: SessionDep
) -> CaseRead:
    """Change a case; new search settings start a new try, a new scorer re-scores the latest run."""
    teams.set_sharing(session=session, user=user, obj=case, team_ids=body.team_ids)
    case = case_updates.update_case(session=session, user=user, case=case, body=body)
    return service.to_read(session=session, case=case)


@router.delete("/{case_id}", status_code=204)
def delete_case(case: CaseDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete a case and everything in it (its owner only)."""
    access.require_owner(user=user, obj=case, action="delete it")
    service.delete_case(session=session, case=case)


@router.get("/{case_id}/tries", response_model=list[TryRead])
def list_tries(case: CaseDep, session: SessionDep) -> list[TryRead]:
    """Return every try of the case, newest first."""
    return [TryRead.model_validate(t) for t in service.list_tries(session=session, case=case)]


@router.get("/{case_id}/tries/{number}", response_model=TryRead)
def get_try(number: int, case: CaseDep, session: SessionDep) -> TryRead:
    """Return one try of the case."""
    return TryRead.model_validate(service.get_try(session=session, case=case, number=number))
