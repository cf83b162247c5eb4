"""Teams: members with roles, and what sharing a resource with a team means (see access)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy.orm import Session

from app.accounts.deps import CurrentUser
from app.models import Team
from app.teams import service
from app.teams.deps import OwnTeamDep, TeamDep
from app.teams.schemas import MemberPut, MemberRead, TeamCreate, TeamRead, TeamUpdate
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/teams", tags=["teams"])


def _reads(session: Session, teams: list[Team]) -> list[TeamRead]:
    members = service.members(session=session, team_ids=[t.id for t in teams])
    return [
        TeamRead(
            id=t.id,
            name=t.name,
            members=[
                MemberRead(user_id=m.user_id, email=email, role=m.role)
                for m, email in members[t.id]
            ],
        )
        for t in teams
    ]


@router.get("", response_model=list[TeamRead])
def list_teams(user: CurrentUser, session: SessionDep) -> list[TeamRead]:
    """Return the teams the caller belongs to, with their members."""
    return _reads(session, service.list_teams(session=session, user=user))


@router.post("", response_model=TeamRead, status_code=201)
def create_team(body: TeamCreate, user: CurrentUser, session: SessionDep) -> TeamRead:
    """Create a team; the caller is its first owner."""
    return _reads(session, [service.create_team(session=session, user=user, name=body.name)])[0]


@router.get("/{team_id}", response_model=TeamRead)
def get_team(team: TeamDep, session: SessionDep) -> TeamRead:
    """Return one of the caller's teams."""
    return _reads(session, [team])[0]


@router.patch("/{team_id}", response_model=TeamRead)
def update_team(team: OwnTeamDep, body: TeamUpdate, session: SessionDep) -> TeamRead:
    """Rename a team (owners only)."""
    return _reads(session, [service.rename_team(session=session, team=team, name=body.name)])[0]


@router.delete("/{team_id}", status_code=204)
def delete_team(team: OwnTeamDep, session: SessionDep) -> None:
    """Delete a team (owners only); what it shared stays with each resource's owner."""
    service.delete_team(session=session, team=team)


@router.put("/{team_id}/members", response_model=TeamRead)
def put_member(team: OwnTeamDep, body: MemberPut, session: SessionDep) -> TeamRead:
    """Add a user by email or change their role (owners only; idempotent)."""
    service.put_member(session=session, team=team, email=body.email, role=body.role)
    return _reads(session, [team])[0]


@router.delete("/{team_id}/members/{user_id}", status_code=204)
def remove_member(team: TeamDep, user_id: int, user: CurrentUser, session: SessionDep) -> None:
    """Remove a member (owners only; anyone may remove themselves). A team keeps an owner."""
    service.remove_member(session=session, team=team, user_id=user_id, by=user)
