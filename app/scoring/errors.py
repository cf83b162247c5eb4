"""Exceptions raised by the scoring package.

Scoring itself never raises on query data (a bad query becomes an ``error`` outcome);
these exceptions reject a scorer definition before it is used::

    ScorerError                 base of everything raised here
    └── ScorerConfigError       a field of the scorer definition is invalid (.field, .message)
        └── ScorerSyntaxError   the JavaScript does not parse (.line, 1-based, or None)
"""

from __future__ import annotations


class ScorerError(Exception):
    """Base class of the scoring package's exceptions."""


class ScorerConfigError(ScorerError):
    """A scorer definition is invalid; ``field`` names the offending input."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ScorerSyntaxError(ScorerConfigError):
    """The scorer's JavaScript does not parse; ``line`` is within the user's code."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__("code", message if line is None else f"{message} (line {line})")
        self.line = line
