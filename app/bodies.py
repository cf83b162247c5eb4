"""Shared pieces of the API bodies."""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
QueryText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
MAX_OPTIONS_BYTES = 64 * 1024


def _small_options(value: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(value, default=str)) > MAX_OPTIONS_BYTES:
        raise ValueError(f"options may take at most {MAX_OPTIONS_BYTES // 1024} KiB as JSON")
    return value


Options = Annotated[dict[str, Any], AfterValidator(_small_options)]
# The teams a case, scorer, search endpoint or book is shared with (set by its owner only).
TeamIds = Annotated[list[int], Field(max_length=100)]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("text must not contain NUL characters")
        if _LONE_SURROGATE.search(value):
            raise ValueError("text must not contain unpaired surrogates")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("numbers must be finite (no NaN or Infinity)")
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

    NUL characters, unpaired surrogates and non-finite numbers are refused everywhere:
    PostgreSQL cannot store the first two, and JSON has no NaN or Infinity.
    """

    model_config = ConfigDict(extra="forbid")

    _no_nul = field_validator("*", mode="before")(_without_nul)


class Out(BaseModel):
    """A response body read from ORM objects or plain data."""

    model_config = ConfigDict(from_attributes=True)


PositiveTimeout = Annotated[float, Field(gt=0, le=300)]
