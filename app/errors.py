"""Relevo's own exceptions: what a service raises when it refuses.

RelevoError              400  (the base: ``message`` is what the user reads)
├── NotFound             404  (also for another user's resource)
├── Forbidden            403  (a team member trying what only the resource's owner may do)
├── Conflict             409
├── TooManyRequests      429  (``retry_after_s`` goes out as Retry-After)
├── BadRequest           400
├── Invalid              422  (names the field, in FastAPI's validation shape)
└── ImportRejected       422  (a file with bad lines: each by line number, nothing stored)

LoginRequired                 (a page needs a signed-in user: answered by the login page)

No web framework here: the handlers that turn these into responses live in
app/web_common/errors.py (JSON) and app/web_common/html_errors.py (pages).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

__all__ = [
    "BadRequest",
    "Conflict",
    "Forbidden",
    "ImportRejected",
    "Invalid",
    "LoginRequired",
    "NotFound",
    "RelevoError",
    "TooManyRequests",
    "public_message",
]


class LoginRequired(Exception):
    """A page needs a signed-in user; answered with a redirect to the login page."""


class RelevoError(Exception):
    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def detail(self) -> Any:
        """Return the value of the "detail" key of the error body."""
        return self.message

    def extra(self) -> dict[str, Any]:
        """Return more keys of the error body beside "detail" (none by default)."""
        return {}


class NotFound(RelevoError):
    status_code = 404


class Forbidden(RelevoError):
    status_code = 403


class Conflict(RelevoError):
    status_code = 409


class TooManyRequests(RelevoError):
    """The caller has too much under way; ``retry_after_s`` goes out as Retry-After."""

    status_code = 429

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class BadRequest(RelevoError):
    status_code = 400


class Invalid(RelevoError):
    """A value that parsed but breaks a rule; reported like a validation error."""

    status_code = 422

    def __init__(
        self,
        field: str | tuple[str | int, ...],
        message: str,
        *,
        more: Sequence[tuple[str | tuple[str | int, ...], str]] = (),
    ) -> None:
        super().__init__(message)
        self.loc = _body_loc(field)
        # Every problem found at once (the first is also loc/message), so a form shows all.
        self.problems: list[tuple[tuple[str | int, ...], str]] = [
            (self.loc, message),
            *((_body_loc(f), m) for f, m in more),
        ]

    @classmethod
    def collected(cls, problems: Sequence[tuple[str | tuple[str | int, ...], str]]) -> Invalid:
        """Return one error carrying several problems (there must be at least one)."""
        (field, message), *more = problems
        return cls(field, message, more=more)

    def detail(self) -> Any:
        """Return a FastAPI-style list naming each field."""
        return [
            {"loc": list(loc), "msg": message, "type": "value_error"}
            for loc, message in self.problems
        ]


def _body_loc(field: str | tuple[str | int, ...]) -> tuple[str | int, ...]:
    return ("body", field) if isinstance(field, str) else ("body", *field)


def public_message(exc: BaseException) -> str:
    """Return what a user may read about an unexpected error: never SQL or its parameters."""
    from app.search.errors import SearchError

    if isinstance(exc, RelevoError | SearchError):
        return exc.message
    return f"an internal error ({type(exc).__name__}); it has been logged"


class ImportRejected(RelevoError):
    """A file with bad lines: 422 with every problem (the first 100) by line number.

    ``summary`` (a dataclass) says what the good lines would change, for a preview.
    """

    status_code = 422
    max_reported = 100

    def __init__(
        self, message: str, errors: Sequence[tuple[int, str]], summary: Any | None = None
    ) -> None:
        super().__init__(message)
        self.errors = [
            {"line": line, "message": text} for line, text in errors[: self.max_reported]
        ]
        self.summary = summary

    def extra(self) -> dict[str, Any]:
        """Return the list of bad lines, beside "detail" in the error body."""
        if self.summary is None:
            return {"errors": self.errors}
        return {"errors": self.errors, "preview": dataclasses.asdict(self.summary)}
