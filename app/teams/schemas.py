"""Team bodies."""

from __future__ import annotations

from pydantic import Field

from app.bodies import Body, Name, Out
from app.vocabulary import TeamRole


class TeamCreate(Body):
    name: Name


class TeamUpdate(Body):
    name: Name


class MemberPut(Body):
    email: str = Field(min_length=1, max_length=320)
    role: TeamRole = TeamRole.MEMBER


class MemberRead(Out):
    user_id: int
    email: str
    role: TeamRole


class TeamRead(Out):
    id: int
    name: str
    members: list[MemberRead]
