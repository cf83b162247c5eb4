"""Plain data shared by the builders, parsers and the client."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.search.storable import (
    MAX_EXPLAIN_DEPTH,
    MAX_FIELD_DEPTH,
    storable,
    storable_count,
    storable_text,
)
from app.vocabulary import Engine, HttpMethod

__all__ = [
    "DEFAULT_FIELD_SPEC",
    "ENGINES",
    "Doc",
    "EndpointConfig",
    "Engine",
    "SearchRequest",
    "SearchResult",
]

ENGINES: tuple[str, ...] = tuple(Engine)
# What a new case or a connection test shows of each doc unless told otherwise.
DEFAULT_FIELD_SPEC = "id:_id title:title"


@functools.lru_cache(maxsize=256)  # every request's error path names the URL
def redact_url(url: str) -> str:
    """Return ``url`` without any ``user:password@`` part, safe for messages."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "<invalid url>"
    if parsed.userinfo:
        return str(parsed.copy_with(username=None, password=None))
    return url


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to send search requests; secrets are kept out of ``repr``."""

    engine: Engine
    url: str
    method: HttpMethod = HttpMethod.GET
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    basic_auth: str | None = field(default=None, repr=False)
    timeout_s: float = 10.0
    requests_per_minute: int = 0
    max_concurrency: int = 8
    # Set when the stored secrets cannot be decrypted: every request fails with this message.
    secrets_error: str | None = field(default=None, repr=False)
    # searchapi: the JavaScript that turns an answer into docs (docsMapper and friends).
    mapper_code: str | None = field(default=None, repr=False)
    # Whose share of the JavaScript sandbox the mapper runs in (a user id): the caller of a
    # try, the case's owner in a run. The sandbox is fair between owners, as for scorers.
    sandbox_owner: int | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; expected one of {ENGINES}")
        if self.method not in tuple(HttpMethod):
            raise ValueError(f"method must be GET or POST, not {self.method!r}")
        # Plain strings are accepted from callers; the fields hold the vocabulary's members.
        object.__setattr__(self, "engine", Engine(self.engine))
        object.__setattr__(self, "method", HttpMethod(self.method))
        if not self.timeout_s > 0:
            raise ValueError("timeout_s must be positive")
        if self.requests_per_minute < 0:
            raise ValueError("requests_per_minute must be 0 (unlimited) or positive")
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")

    def __repr__(self) -> str:
        auth = "set" if self.basic_auth else None
        return (
            f"EndpointConfig(engine={str(self.engine)!r}, url={redact_url(self.url)!r}, "
            f"method={str(self.method)!r}, headers={sorted(self.headers)!r}, basic_auth={auth!r}, "
            f"timeout_s={self.timeout_s!r}, requests_per_minute={self.requests_per_minute!r}, "
            f"max_concurrency={self.max_concurrency!r})"
        )

    @property
    def safe_url(self) -> str:
        """Return the URL with any embedded credentials removed."""
        return redact_url(self.url)


@dataclass(frozen=True)
class SearchRequest:
    """One query to render against a try's template."""

    template: str
    query_text: str
    query_options: Mapping[str, Any] = field(default_factory=dict)
    case_options: Mapping[str, Any] = field(default_factory=dict)
    knobs: Mapping[str, float] = field(default_factory=dict)
    field_spec: str = DEFAULT_FIELD_SPEC
    rows: int = 10
    explain: bool = False


@dataclass(frozen=True)
class Doc:
    """One ranked document: its id, 1-based position, displayed fields and explain.

    Every engine's answer becomes these, so this is where what it says is made storable
    and showable (:mod:`app.search.storable`): a hostile answer cannot fail a write.
    """

    id: str
    position: int
    fields: dict[str, Any]
    explain: Any | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", storable_text(self.id))
        object.__setattr__(self, "fields", storable(self.fields, MAX_FIELD_DEPTH + 1))
        if self.explain is not None:
            object.__setattr__(self, "explain", storable(self.explain, MAX_EXPLAIN_DEPTH))


@dataclass(frozen=True)
class SearchResult:
    """The ranked documents of one query and the engine's total hit count."""

    docs: list[Doc]
    num_found: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_found", storable_count(self.num_found))
