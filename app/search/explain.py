"""Readable explain: the top contributions of an engine's score explanation, as a short tree.

Elasticsearch and OpenSearch (``_explanation``) and Solr's structured debug explain share one
shape: ``{"value": 1.5, "description": "sum of:", "details": [...]}``. Solr's plain explain is
text, shown as it is. Pure functions of plain data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExplainLine", "ExplainView", "explain_view"]

MAX_DEPTH = 4
MAX_CHILDREN = 4


@dataclass(frozen=True)
class ExplainLine:
    """One node of the tree: its depth, value and description."""

    depth: int
    value: float | None
    description: str
    # Children beyond the shown ones, folded into one line: how many, and their summed value.
    folded: int = 0

    @property
    def shown_value(self) -> str:
        """Return the value as a reader wants it: four significant digits, no exponent."""
        if self.value is None:
            return "\u2013"
        if abs(self.value) >= 10_000:
            return f"{self.value:,.0f}"
        if self.value != 0 and abs(self.value) < 0.001:
            return f"{self.value:.2e}"
        return f"{self.value:.4g}"


@dataclass(frozen=True)
class ExplainView:
    """An explain made readable: tree lines, or the engine's text when it sent text."""

    lines: list[ExplainLine] = field(default_factory=list)
    text: str | None = None

    @property
    def empty(self) -> bool:
        """Return whether there is nothing to show."""
        return not self.lines and not self.text


def _value(node: Mapping[str, Any]) -> float | None:
    value = node.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _children(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    details = node.get("details")
    if not isinstance(details, list):
        return []
    kids = [d for d in details if isinstance(d, Mapping)]
    # The biggest contributions first; a child without a value goes last.
    return sorted(kids, key=_sort_key)


def _sort_key(node: Mapping[str, Any]) -> float:
    value = _value(node)
    return math.inf if value is None else -value


def _walk(
    node: Mapping[str, Any], depth: int, lines: list[ExplainLine], max_depth: int, breadth: int
) -> None:
    description = str(node.get("description") or "").strip()
    lines.append(ExplainLine(depth=depth, value=_value(node), description=description))
    if depth + 1 >= max_depth:
        return
    kids = _children(node)
    for kid in kids[:breadth]:
        _walk(kid, depth + 1, lines, max_depth, breadth)
    rest = kids[breadth:]
    if rest:
        values = [v for v in (_value(k) for k in rest) if v is not None]
        lines.append(
            ExplainLine(
                depth=depth + 1,
                value=sum(values) if values else None,
                description=f"{len(rest)} more",
                folded=len(rest),
            )
        )


def explain_view(
    explain: Any, *, max_depth: int = MAX_DEPTH, breadth: int = MAX_CHILDREN
) -> ExplainView:
    """Return the explain's top contributions as depth-tagged lines, or its text as it is."""
    if isinstance(explain, str):
        return ExplainView(text=explain.strip("\n") or None)
    if not isinstance(explain, Mapping) or ("value" not in explain and "details" not in explain):
        return ExplainView()
    lines: list[ExplainLine] = []
    _walk(explain, 0, lines, max(1, max_depth), max(1, breadth))
    return ExplainView(lines=lines)
