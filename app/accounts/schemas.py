"""Account bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from app.accounts.scopes import split_scopes
from app.bodies import RequestBody, ResponseBody

Scope = Literal["read", "run", "write", "judge"]
SCOPES_DESCRIPTION = (
    "What the key may do: read; run (runs, sweeps, searches); write (every other change); "
    "judge (may spend on language models)"
)


class ApiKeyCreate(RequestBody):
    name: str = Field(default="", max_length=200)
    expires_at: datetime | None = None
    can_manage_keys: bool = False
    scopes: list[Scope] | None = Field(
        default=None,
        min_length=1,
        description=SCOPES_DESCRIPTION + '; default every one (an agent\'s key: ["read"])',
    )


class ApiKeyUpdate(RequestBody):
    scopes: list[Scope] = Field(min_length=1, description=SCOPES_DESCRIPTION)


class ApiKeyRead(ResponseBody):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    can_manage_keys: bool
    scopes: list[Scope] = Field(description=SCOPES_DESCRIPTION)

    @field_validator("scopes", mode="before")
    @classmethod
    def _stored(cls, value: Any) -> Any:
        return split_scopes(value) if isinstance(value, str) else value


class ApiKeyCreated(ApiKeyRead):
    key: str


class CurrentUserRead(ResponseBody):
    id: int
    email: str
    is_admin: bool
