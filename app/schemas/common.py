"""Shared pieces of the API bodies."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Options = dict[str, Any]


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("text must not contain NUL characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            _without_nul(key)
            _without_nul(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _without_nul(item)
    return value


class Body(BaseModel):
    """A request body: unknown fields are refused so that typos do not pass silently.

    NUL characters are refused everywhere: PostgreSQL cannot store them in text.
    """

    model_config = ConfigDict(extra="forbid")

    _no_nul = field_validator("*", mode="before")(_without_nul)


class Out(BaseModel):
    """A response body read from ORM objects or plain data."""

    model_config = ConfigDict(from_attributes=True)


PositiveTimeout = Annotated[float, Field(gt=0, le=300)]
