"""The search endpoint form: the fields a person types, read into the API's bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from app.endpoints.schemas import EndpointCreate, EndpointRead, EndpointUpdate
from app.search import adapter_for
from app.vocabulary import Engine, HttpMethod
from app.web_common.forms import WebForm

__all__ = ["EndpointForm"]


class EndpointForm(WebForm):
    """The search endpoint form; secrets are write-only (blank keeps the stored ones)."""

    fields: ClassVar[tuple[str, ...]] = (
        "name",
        "engine",
        "url",
        "method",
        "headers",
        "basic_auth",
        "timeout_s",
        "requests_per_minute",
        "max_concurrency",
        "mapper_code",
    )
    labels: ClassVar[Mapping[str, str]] = {
        "name": "Name",
        "engine": "Engine",
        "url": "URL",
        "method": "Method",
        "headers": "Headers",
        "basic_auth": "Basic auth",
        "timeout_s": "Timeout",
        "requests_per_minute": "Requests per minute",
        "max_concurrency": "Max concurrency",
        "mapper_code": "Mapper code",
    }
    numbers: ClassVar[tuple[str, ...]] = ("timeout_s", "requests_per_minute", "max_concurrency")
    blank: ClassVar[dict[str, str]] = {
        "name": "",
        "engine": Engine.OPENSEARCH,
        "url": "",
        "method": HttpMethod.GET,
        "headers": "",
        "basic_auth": "",
        "timeout_s": "10",
        "requests_per_minute": "0",
        "max_concurrency": "8",
        "mapper_code": "",
    }

    @classmethod
    def of(cls, endpoint: EndpointRead) -> EndpointForm:
        """Return the form showing a stored endpoint (its secrets never shown)."""
        return cls(
            {
                "name": endpoint.name,
                "engine": endpoint.engine,
                "url": endpoint.url,
                "method": endpoint.method,
                "headers": "",
                "basic_auth": "",
                "timeout_s": f"{endpoint.timeout_s:g}",
                "requests_per_minute": str(endpoint.requests_per_minute),
                "max_concurrency": str(endpoint.max_concurrency),
                "mapper_code": endpoint.mapper_code or "",
            }
        )

    def create_body(self) -> EndpointCreate:
        """Return the endpoint to create."""
        return self.validate(EndpointCreate, self._values(keep_blank_secrets=False))

    def update_body(self, *, remove_basic_auth: bool) -> EndpointUpdate:
        """Return the changes; blank secret fields keep the stored secrets."""
        values = self._values(keep_blank_secrets=True)
        if remove_basic_auth:
            values["basic_auth"] = None
        return self.validate(EndpointUpdate, values)

    def _values(self, *, keep_blank_secrets: bool) -> dict[str, Any]:
        result: dict[str, Any] = {
            name: self.text(name)
            for name in ("name", "engine", "url", "method")
            if self.text(name) or not keep_blank_secrets
        }
        result.update({name: self.text(name) for name in self.numbers if self.text(name)})
        headers = self._headers()
        if headers or not keep_blank_secrets:
            result["headers"] = headers
        if self.values["basic_auth"]:
            result["basic_auth"] = self.values["basic_auth"]
        # Only an endpoint read by a mapper (a search API) has mapper code; others send none
        # (a field left over from switching the engine in the form is not kept).
        engine = result.get("engine", self.text("engine"))
        if engine in tuple(Engine) and adapter_for(engine).needs_mapper:
            result["mapper_code"] = str(self.values.get("mapper_code") or "")
        return result

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for line in self.lines(str(self.values["headers"])):
            name, sep, value = line.partition(":")
            if not sep or not name.strip():
                self.fail("headers", f"Write one 'Name: value' per line, not {line.strip()!r}.")
                return {}
            headers[name.strip()] = value.strip()
        return headers
