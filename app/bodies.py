"""Shared pieces of the API bodies."""

from __future__ import annotations

import json
import math
import re
import typing
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
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


class RequestBody(BaseModel):
    """A request body: unknown fields are refused so that typos do not pass silently.

    NUL characters, unpaired surrogates and non-finite numbers are refused everywhere:
    PostgreSQL cannot store the first two, and JSON has no NaN or Infinity.
    """

    model_config = ConfigDict(extra="forbid")

    _no_nul = field_validator("*", mode="before")(_without_nul)


def utc_text(value: datetime | None) -> Any:
    """Return a datetime as the API writes every one: ISO 8601 in UTC, ending in ``Z``.

    A naive datetime is UTC (SQLite hands back what was stored without its zone); an aware
    one is converted. The same instant thus reads the same whether the row was just
    written (aware) or read back (naive on SQLite, the session's zone on PostgreSQL).
    """
    if value is None:
        return None
    moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return moment.isoformat().replace("+00:00", "Z")


_UTC_TEXT = PlainSerializer(utc_text, when_used="json")


def _holds_datetime(annotation: Any) -> bool:
    """Whether a field is a datetime, or an optional one (``datetime | None``)."""
    if annotation is datetime:
        return True
    args = typing.get_args(annotation)
    return type(None) in args and any(a is datetime for a in args)


class ResponseBody(BaseModel):
    """A response body read from ORM objects or plain data.

    Its datetime fields (plain or optional) are written to JSON by ``utc_text``, the one
    serializer of the API's datetimes; other fields keep pydantic's own (fast) serializers.
    """

    model_config = ConfigDict(from_attributes=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        changed = False
        for field in cls.model_fields.values():
            if _holds_datetime(field.annotation) and _UTC_TEXT not in field.metadata:
                field.metadata.append(_UTC_TEXT)
                changed = True
        if changed:
            cls.model_rebuild(force=True, raise_errors=False)


PositiveTimeout = Annotated[float, Field(gt=0, le=300)]


def _in_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time is out of range once in UTC") from None


UtcTime = Annotated[datetime, AfterValidator(_in_utc)]
