"""Teams: create and rename them, manage members and roles, and share resources with them."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import access
from app.access import Shareable, valid_id
from app.errors import Conflict, Forbidden, NotFound
from app.models import Team, TeamMember, User
from app.vocabulary import TeamRole


def create_team(*, session: Session, user: User, name: str) -> Team:
    """Create a team with the user as its first owner."""
    team = Team(name=name)
    session.add(team)
    session.flush()
    session.add(TeamMember(team_id=team.id, user_id=user.id, role=TeamRole.OWNER))
    session.flush()
    return team


def list_teams(*, session: Session, user: User) -> list[Team]:
    """Return the teams the user belongs to, by name."""
    stmt = (
        select(Team)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.user_id == user.id)
        .order_by(Team.name, Team.id)
    )
    return list(session.scalars(stmt))


def role_of(*, session: Session, team_id: int, user_id: int) -> TeamRole | None:
    """Return the user's role in the team, or None when they are not a member."""
    return session.scalar(
        select(TeamMember.role).where(TeamMember.team_id == team_id, TeamMember.user_id == user_id)
    )


def visible_team(*, session: Session, user: User, team_id: int) -> Team:
    """Return a team the user belongs to; any other id is 404."""
    team = session.get(Team, team_id) if valid_id(team_id) else None
    if (
        team is None
        or user.is_disabled
        or role_of(session=session, team_id=team.id, user_id=user.id) is None
    ):
        raise NotFound(f"No team with id {team_id}.")
    return team


def owned_team(*, session: Session, user: User, team_id: int) -> Team:
    """Return a team the user owns; members get 403, others 404."""
    team = visible_team(session=session, user=user, team_id=team_id)
    if role_of(session=session, team_id=team.id, user_id=user.id) != TeamRole.OWNER:
        raise Forbidden(f"Only an owner of team {team.id} may change it.")
    return team


def members(
    *, session: Session, team_ids: Sequence[int]
) -> dict[int, list[tuple[TeamMember, str]]]:
    """Return each team's members with their emails, owners first (one query)."""
    found: dict[int, list[tuple[TeamMember, str]]] = {team_id: [] for team_id in team_ids}
    if not team_ids:
        return found
    rows = session.execute(
        select(TeamMember, User.email)
        .join(User, User.id == TeamMember.user_id)
        .where(TeamMember.team_id.in_(team_ids))
        .order_by(TeamMember.team_id, TeamMember.role.desc(), User.email)
    )
    for member, email in rows:
        found[member.team_id].append((member, email))
    return found


def rename_team(*, session: Session, team: Team, name: str) -> Team:
    """Give the team a new name."""
    team.name = name
    session.flush()
    return team


def delete_team(*, session: Session, team: Team) -> None:
    """Delete the team; what it shared goes back to being its owners' alone."""
    session.delete(team)
    session.flush()


def put_member(*, session: Session, team: Team, email: str, role: TeamRole) -> TeamMember:
    """Add the user with this email to the team, or change their role (idempotent)."""
    user = session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))
    if user is None:
        raise NotFound(f"No user with the email {email!r}.")
    member = session.get(TeamMember, (team.id, user.id))
    if member is None:
        member = TeamMember(team_id=team.id, user_id=user.id, role=role)
        session.add(member)
    elif member.role != role:
        if member.role == TeamRole.OWNER:
            _keep_an_owner(session=session, team=team)
        member.role = role
    session.flush()
    return member


def remove_member(*, session: Session, team: Team, user_id: int, by: User) -> None:
    """Remove a member (``by`` an owner, or the member leaving); they lose access to what the
    team shares at their next request."""
    if user_id != by.id:
        owned_team(session=session, user=by, team_id=team.id)
    member = session.get(TeamMember, (team.id, user_id)) if valid_id(user_id) else None
    if member is None:
        raise NotFound(f"Team {team.id} has no member with user id {user_id}.")
    if member.role == TeamRole.OWNER:
        _keep_an_owner(session=session, team=team)
    session.delete(member)
    session.flush()


def _keep_an_owner(*, session: Session, team: Team) -> None:
    owners = session.scalar(
        select(func.count())
        .select_from(TeamMember)
        .where(TeamMember.team_id == team.id, TeamMember.role == TeamRole.OWNER)
    )
    if (owners or 0) <= 1:
        raise Conflict(f"Team {team.id} must keep at least one owner; make another owner first.")


def teams_for_sharing(*, session: Session, user: User, team_ids: Sequence[int]) -> list[Team]:
    """Return the teams to share with; a team the user is not in answers 404."""
    wanted = sorted(set(team_ids))
    if not wanted:
        return []
    valid = [t for t in wanted if valid_id(t)]
    found = list(
        session.scalars(
            select(Team)
            .join(TeamMember, TeamMember.team_id == Team.id)
            .where(Team.id.in_(valid), TeamMember.user_id == user.id)
            .order_by(Team.id)
        )
    )
    missing = [t for t in wanted if t not in {team.id for team in found}]
    if missing:
        raise NotFound(f"No team with id {missing[0]}.")
    return found


def set_sharing(
    *, session: Session, user: User, obj: Shareable, team_ids: Sequence[int] | None
) -> None:
    """Set which teams a resource is shared with (owner only); None leaves it as it is.

    Does not commit: the caller's save writes it with the rest of the change.
    """
    if team_ids is None:
        return
    if obj.owner_id is None:
        raise Conflict("Built-in scorers are shared with everyone already.")
    access.require_owner(user=user, obj=obj, action="change who it is shared with")
    obj.teams = teams_for_sharing(session=session, user=user, team_ids=team_ids)


def share(*, session: Session, user: User, obj: Shareable, team_ids: Sequence[int]) -> None:
    """Share the resource with exactly these teams (its owner only) and save."""
    set_sharing(session=session, user=user, obj=obj, team_ids=team_ids)
    session.flush()


def team_ids(obj: Shareable) -> list[int]:
    """Return the ids of the teams the resource is shared with."""
    return [team.id for team in obj.teams]
