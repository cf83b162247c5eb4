"""Exceptions raised by :mod:`app.search`.

The tree (everything derives from :class:`SearchError`)::

    SearchError
    ├── TemplateError          the query template is unusable (configuration problem)
    ├── FieldSpecError         the field spec is unusable (configuration problem)
    └── EngineError            one query failed; the run records it and goes on
        ├── EngineTimeout          no answer within the endpoint's timeout
        ├── EngineUnavailable      connection failed or 502/503/504, after retries
        ├── EngineHTTPError        any other 4xx/5xx; message taken from the engine's body
        ├── EngineResponseError    the answer is not JSON or not in the expected shape
        └── RequestBuildError      this query's request could not be rendered

Messages never contain credentials: URLs are shown without user info and header values
or passwords are never interpolated.
"""

from __future__ import annotations

__all__ = [
    "EngineError",
    "EngineHTTPError",
    "EngineResponseError",
    "EngineTimeout",
    "EngineUnavailable",
    "FieldSpecError",
    "RequestBuildError",
    "SearchError",
    "TemplateError",
]


class SearchError(Exception):
    """Base class of every error raised by the search package."""

    @property
    def message(self) -> str:
        """Return the human-readable message."""
        return str(self.args[0]) if self.args else ""


class TemplateError(SearchError):
    """The query template cannot be rendered into a valid request."""


class FieldSpecError(SearchError):
    """The field spec has a token that cannot be understood."""


class EngineError(SearchError):
    """A single search request failed."""


class EngineTimeout(EngineError):
    """The engine did not answer within the endpoint's timeout."""


class EngineUnavailable(EngineError):
    """The engine could not be reached, or kept answering 502/503/504."""


class EngineHTTPError(EngineError):
    """The engine answered with an error status."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class EngineResponseError(EngineError):
    """The engine's answer is malformed or lacks what the field spec asks for."""


class RequestBuildError(EngineError):
    """The request for one query could not be built (template or field spec problem).

    Raised by :meth:`SearchClient.search` so that callers only need to catch
    :class:`EngineError` per query; the original error is chained as ``__cause__``.
    """
