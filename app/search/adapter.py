"""What every engine's module provides: one adapter per engine, found by ``engines.adapter_for``.

An adapter builds the httpx request of a query and of a lookup by ids, reads the engine's
answer into a search result, finds the message in its error bodies and checks a query
template. It also answers what the rest of the app asks of an engine (whether it answers
from a result file, needs mapper code, holds UBI click logs; its search URL, the method
a query goes with, the template a new case starts with), so no module outside this
package asks which engine an endpoint is. Each engine's module (``solr``, ``elastic``,
``vespa``, ``searchapi``, ``static``) holds its own; the shared parts of requests and
answers are in ``http_request`` and ``answers``.
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from app.search.answers import Answer
from app.search.fieldspec import FieldSpec
from app.search.templates import RenderContext
from app.search.types import EndpointConfig, Engine, SearchRequest, SearchResult
from app.vocabulary import HttpMethod

__all__ = ["EngineAdapter"]


class EngineAdapter(Protocol):
    """One engine's requests, answers, error bodies and templates."""

    @property
    def engine(self) -> Engine:
        """The engine it speaks to."""
        ...

    @property
    def label(self) -> str:
        """The engine's name as people read it ("Solr", "Result file")."""
        ...

    @property
    def answers_from_file(self) -> bool:
        """Whether its results are read from an uploaded result file (nothing goes over
        HTTP, no template is rendered, it has no URL)."""
        ...

    @property
    def needs_mapper(self) -> bool:
        """Whether its answers are read by the endpoint's JavaScript mapper (mapper code)."""
        ...

    @property
    def holds_ubi_logs(self) -> bool:
        """Whether its indexes can hold UBI click logs a click log pulls (scroll search)."""
        ...

    @property
    def test_field_spec(self) -> str:
        """The field spec a connection test shows unless told otherwise."""
        ...

    def default_template(self, method: HttpMethod) -> str:
        """Return the template a new case on an endpoint sending with ``method`` starts with."""
        ...

    def query_method(self, method: HttpMethod) -> HttpMethod:
        """Return the method a query is sent with when the endpoint is set to ``method``."""
        ...

    def search_url(self, url: str) -> str:
        """Return the URL a query is sent to, from the endpoint's URL."""
        ...

    def endpoint_url(self, search_url: str) -> str:
        """Return the endpoint's URL from the URL its queries are sent to (``search_url``
        undone; another URL is returned as it is)."""
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
