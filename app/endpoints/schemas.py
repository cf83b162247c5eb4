"""Search endpoint bodies."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from app.bodies import Body, Name, Out, PositiveTimeout, TeamIds
from app.search.models import DEFAULT_FIELD_SPEC
from app.vocabulary import Engine, HttpMethod


def _check_url(value: str) -> str:
    value = value.strip()
    if not value.startswith(("http://", "https://")) or len(value) < 10:
        raise ValueError("must be an http:// or https:// URL")
    return value.rstrip("/")


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def _check_headers(value: dict[str, str] | None) -> dict[str, str] | None:
    for name, header in (value or {}).items():
        if not _HEADER_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid HTTP header name")
        if "\r" in header or "\n" in header:
            raise ValueError(f"the value of header {name!r} has a line break")
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in header):
            raise ValueError(f"the value of header {name!r} has a control character")
    return value


def _check_basic_auth(value: str | None) -> str | None:
    if value and ":" not in value:
        raise ValueError("must be 'user:password'")
    return value


class EndpointCreate(Body):
    name: Name
    engine: Engine
    url: str = Field(max_length=2000)
    method: HttpMethod = HttpMethod.GET
    headers: dict[str, str] = Field(default_factory=dict)
    basic_auth: str | None = None
    timeout_s: PositiveTimeout = 10.0
    requests_per_minute: int = Field(default=0, ge=0, le=100_000)
    max_concurrency: int = Field(default=8, ge=1, le=64)
    team_ids: TeamIds = Field(default_factory=list)

    _url = field_validator("url")(_check_url)
    _auth = field_validator("basic_auth")(_check_basic_auth)
    _headers = field_validator("headers")(_check_headers)


class EndpointUpdate(Body):
    name: Name | None = None
    engine: Engine | None = None
    url: str | None = Field(default=None, max_length=2000)
    method: HttpMethod | None = None
    headers: dict[str, str] | None = None
    basic_auth: str | None = None
    timeout_s: PositiveTimeout | None = None
    requests_per_minute: int | None = Field(default=None, ge=0, le=100_000)
    max_concurrency: int | None = Field(default=None, ge=1, le=64)
    team_ids: TeamIds | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    _auth = field_validator("basic_auth")(_check_basic_auth)
    _headers = field_validator("headers")(_check_headers)


class EndpointRead(Out):
    id: int
    name: str
    engine: Engine
    url: str
    method: HttpMethod
    header_names: list[str]
    has_basic_auth: bool
    timeout_s: float
    requests_per_minute: int
    max_concurrency: int
    team_ids: list[int] = Field(default_factory=list)


class ConnectionTest(Body):
    query: str = "test"
    query_template: str | None = None
    field_spec: str = DEFAULT_FIELD_SPEC


class ConnectionReportRead(Out):
    ok: bool
    num_found: int | None
    sample: dict[str, object] | None
    message: str
    duration_ms: float
