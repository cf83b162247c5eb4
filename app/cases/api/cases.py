"""Cases and their tries."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.cases import flows, service
from app.cases.deps import CaseDep, TryDep
from app.cases.schemas import CaseCreate, CaseRead, CaseUpdate, TryRead
from app.schedules.case_links import schedule_fields
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/cases", tags=["cases"])


@router.get("", response_model=list[CaseRead])
def list_cases(user: CurrentUser, session: SessionDep) -> list[CaseRead]:
    """Return the caller's cases with their latest score."""
    return _scheduled(session, service.list_reads(session=session, user=user))


def _scheduled(session: SessionDep, reads: list[CaseRead]) -> list[CaseRead]:
    extra = schedule_fields(session=session, case_ids=[r.id for r in reads])
    return [r.model_copy(update=extra[r.id]) if r.id in extra else r for r in reads]


@router.post("", response_model=CaseRead, status_code=201)
def create_case(body: CaseCreate, user: CurrentUser, session: SessionDep) -> CaseRead:
    """Create a case with its first try."""
    case = flows.create_case(session=session, user=user, body=body)
    return _scheduled(session, [service.to_read(session=session, case=case)])[0]


@router.get("/{case_id}", response_model=CaseRead)
def get_case(case: CaseDep, session: SessionDep) -> CaseRead:
    """Return one case with its current try's settings."""
    return _scheduled(session, [service.to_read(session=session, case=case)])[0]


@router.patch("/{case_id}", response_model=CaseRead)
def update_case(
    body: CaseUpdate, case: CaseDep, user: CurrentUser, session: SessionDep
) -> CaseRead:
    """Change a case; new search settings start a new try, a new scorer re-scores the latest run."""
    case = flows.update_case(session=session, user=user, case=case, body=body)
    return _scheduled(session, [service.to_read(session=session, case=case)])[0]


@router.delete("/{case_id}", status_code=204)
def delete_case(case: CaseDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete a case and everything in it (its owner only)."""
    service.delete_case(session=session, user=user, case=case)


@router.get("/{case_id}/tries", response_model=list[TryRead])
def list_tries(case: CaseDep, session: SessionDep) -> list[TryRead]:
    """Return every try of the case, newest first."""
    return [TryRead.model_validate(t) for t in service.list_tries(session=session, case=case)]


@router.get("/{case_id}/tries/{number}", response_model=TryRead)
def get_try(found: TryDep) -> TryRead:
    """Return one try of the case."""
    return TryRead.model_validate(found)
