"""Account bodies."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from app.bodies import Body, Out


class ApiKeyCreate(Body):
    name: str = Field(default="", max_length=200)
    expires_at: datetime | None = None
    can_manage_keys: bool = False


class ApiKeyRead(Out):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    can_manage_keys: bool


class ApiKeyCreated(ApiKeyRead):
    key: str


class Me(Out):
    id: int
    email: str
    is_admin: bool
