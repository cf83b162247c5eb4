"""Shared pieces of the API bodies."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Options = dict[str, Any]


class Body(BaseModel):
    """A request body: unknown fields are refused so that typos do not pass silently."""

    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    """A response body read from ORM objects or plain data."""

    model_config = ConfigDict(from_attributes=True)


PositiveTimeout = Annotated[float, Field(gt=0, le=300)]
