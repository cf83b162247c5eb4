"""Administrator bodies: accounts."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from app.bodies import RequestBody, ResponseBody


class UserCreate(RequestBody):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(max_length=1000)
    is_admin: bool = False


class UserUpdate(RequestBody):
    is_disabled: bool | None = None
    password: str | None = Field(default=None, max_length=1000)


class UserRead(ResponseBody):
    id: int
    email: str
    is_admin: bool
    is_disabled: bool
    created_at: datetime
