"""The error of outbound HTTP: a destination that may not or cannot be called.

Each caller says it in its own terms: search raises ``EngineUnavailable`` (a query's
error), a judge fails the pair, a webhook delivery is refused.
"""

from __future__ import annotations

__all__ = ["Unreachable"]


class Unreachable(Exception):
    """The outbound policy refuses the destination, or its host cannot be resolved."""

    @property
    def message(self) -> str:
        """Return the human-readable message."""
        return str(self.args[0]) if self.args else ""
