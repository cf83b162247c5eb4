"""Team bodies."""

from __future__ import annotations

from pydantic import Field

from app.bodies import Name, RequestBody, ResponseBody
from app.vocabulary import TeamRole


class TeamCreate(RequestBody):
    name: Name


class TeamUpdate(RequestBody):
    name: Name


class MemberPut(RequestBody):
    email: str = Field(min_length=1, max_length=320)
    role: TeamRole = TeamRole.MEMBER


class MemberRead(ResponseBody):
    user_id: int
    email: str
    role: TeamRole


class TeamRead(ResponseBody):
    id: int
    name: str
    members: list[MemberRead]
