"""Loading a team the caller belongs to, or owns, else 404/403 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import owned
from app.models import Team
from app.teams.service import owned_team, visible_team

__all__ = ["OwnTeamDep", "TeamDep", "WebOwnTeamDep", "WebTeamDep"]

TeamDep = Annotated[Team, Depends(owned(visible_team, "team_id"))]
WebTeamDep = Annotated[Team, Depends(owned(visible_team, "team_id", page=True))]
OwnTeamDep = Annotated[Team, Depends(owned(owned_team, "team_id"))]
WebOwnTeamDep = Annotated[Team, Depends(owned(owned_team, "team_id", page=True))]
