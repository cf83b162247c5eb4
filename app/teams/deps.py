"""Loading a team the caller belongs to, or owns (else 404/403), and the shareable thing a
sharing page names (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app import access
from app.access import Shareable
from app.accounts.deps import WebUser, owned
from app.models import Team
from app.teams.service import owned_team, visible_team
from app.web_common.deps import SessionDep

__all__ = ["OwnTeamDep", "SharedDep", "TeamDep", "WebOwnTeamDep", "WebTeamDep"]

TeamDep = Annotated[Team, Depends(owned(visible_team, "team_id"))]
WebTeamDep = Annotated[Team, Depends(owned(visible_team, "team_id", page=True))]
OwnTeamDep = Annotated[Team, Depends(owned(owned_team, "team_id"))]
WebOwnTeamDep = Annotated[Team, Depends(owned(owned_team, "team_id", page=True))]


def shared_thing(kind: str, object_id: int, user: WebUser, session: SessionDep) -> Shareable:
    """Return the case, scorer, endpoint or book of a sharing page's path, else 404."""
    return access.visible(session=session, user=user, kind=kind, object_id=object_id)


SharedDep = Annotated[Shareable, Depends(shared_thing)]
