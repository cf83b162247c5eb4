"""Search endpoint bodies."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from app.bodies import Name, PositiveTimeout, RequestBody, ResponseBody, TeamIds
from app.outbound.destinations import url_problem
from app.search import adapter_for
from app.search.types import DEFAULT_FIELD_SPEC
from app.vocabulary import Engine, HttpMethod


def _check_url(value: str) -> str:
    value = value.strip()
    if not value.startswith(("http://", "https://")) or len(value) < 10:
        raise ValueError("must be an http:// or https:// URL")
    problem = url_problem(value)  # unusable, or refused by the outbound policy: 422 now
    if problem is not None:
        raise ValueError(problem)
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


MapperCode = Annotated[str, Field(max_length=100_000)]


def _check_optional_url(value: str) -> str:
    # A static endpoint (a result file) has no URL: empty text.
    return "" if not value.strip() else _check_url(value)


class EndpointCreate(RequestBody):
    name: Name
    engine: Engine
    url: str = Field(default="", max_length=2000)
    method: HttpMethod = HttpMethod.GET
    headers: dict[str, str] = Field(default_factory=dict)
    basic_auth: str | None = None
    timeout_s: PositiveTimeout = 10.0
    requests_per_minute: int = Field(default=0, ge=0, le=100_000)
    max_concurrency: int = Field(default=8, ge=1, le=64)
    team_ids: TeamIds = Field(default_factory=list)
    mapper_code: MapperCode | None = None

    _url = field_validator("url")(_check_optional_url)

    @model_validator(mode="after")
    def _engine_needs(self) -> EndpointCreate:
        problem = engine_problem(self.engine, self.url, self.mapper_code)
        if problem is not None:
            raise ValueError(problem)
        return self

    _auth = field_validator("basic_auth")(_check_basic_auth)
    _headers = field_validator("headers")(_check_headers)


class EndpointUpdate(RequestBody):
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
    mapper_code: MapperCode | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    _auth = field_validator("basic_auth")(_check_basic_auth)
    _headers = field_validator("headers")(_check_headers)


def engine_problem(engine: Engine, url: str, mapper_code: str | None) -> str | None:
    """Return why these settings do not make an endpoint of that engine, or None."""
    adapter = adapter_for(engine)
    if not adapter.answers_from_file and not url:
        return f"a {engine} endpoint needs a url (http:// or https://)"
    if adapter.needs_mapper and not (mapper_code or "").strip():
        return f"a {engine} endpoint needs mapper_code defining docsMapper(data)"
    return None


class EndpointRead(ResponseBody):
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
    mapper_code: str | None = None
    has_results: bool = False  # static: whether a result file was uploaded


class ConnectionTest(RequestBody):
    query: str = "test"
    query_template: str | None = None
    field_spec: str = DEFAULT_FIELD_SPEC


class ConnectionReportRead(ResponseBody):
    ok: bool
    num_found: int | None
    sample: dict[str, object] | None
    message: str
    duration_ms: float


class TryRequest(RequestBody):
    query_text: str = Field(default="test", max_length=2000)
    template: str | None = Field(default=None, max_length=100_000)
    field_spec: str | None = Field(default=None, max_length=2000)
    rows: int = Field(default=10, ge=1, le=100)


class TryDoc(ResponseBody):
    id: str
    rank: int
    fields: dict[str, object]


class TryResult(ResponseBody):
    status: int | None  # the engine's HTTP status, when it answered
    raw: str  # the answer's first 20,000 characters
    docs: list[TryDoc]
    num_found: int | None
    error: str | None


class ResultsUploaded(ResponseBody):
    queries: int
    docs: int
    replaced: bool


class EndpointOption(ResponseBody):
    id: int
    name: str
    engine: Engine
    default_template: str = ""  # the template a new case on it starts with


class EndpointsPage(ResponseBody):
    endpoints: list[EndpointRead]
