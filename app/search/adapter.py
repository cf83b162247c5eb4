"""What every engine's module provides: one adapter per engine, found by ``engines.adapter_for``.

An adapter builds the httpx request of a query and of a lookup by ids, reads the engine's
answer into a search result, finds the message in its error bodies and checks a query
template. Each engine's module (``solr``, ``elastic``, ``vespa``, ``searchapi``,
``static``) holds its own; the shared parts of requests and answers are in
``http_request`` and ``answers``.
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from app.search.answers import Answer
from app.search.fieldspec import FieldSpec
from app.search.models import EndpointConfig, Engine, SearchRequest, SearchResult
from app.search.templates import RenderContext

__all__ = ["EngineAdapter"]


class EngineAdapter(Protocol):
    """One engine's requests, answers, error bodies and templates."""

    @property
    def engine(self) -> Engine:
        """The engine it speaks to."""
        ...

    @property
    def over_http(self) -> bool:
        """Whether queries go over HTTP with a rendered template (not: a result file)."""
        ...

    def build_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, request: SearchRequest
    ) -> httpx.Request:
        """Return the httpx request of one query (auth is added on send)."""
        ...

    def build_ids_request(
        self, http: httpx.AsyncClient, endpoint: EndpointConfig, ids: list[str], spec: FieldSpec
    ) -> httpx.Request:
        """Return the httpx request fetching these doc ids; RequestBuildError if it cannot."""
        ...

    async def parse(
        self,
        endpoint: EndpointConfig,
        answer: Answer,
        spec: FieldSpec,
        *,
        explain: bool,
        rows: int,
    ) -> SearchResult:
        """Return the search result of a successful answer."""
        ...

    def error_message(self, body: Any) -> str | None:
        """Return the engine's own message in an error answer's JSON body, if any."""
        ...

    def validate_template(self, template: str, ctx: RenderContext) -> None:
        """Raise TemplateError if the template cannot be rendered into a request."""
        ...
