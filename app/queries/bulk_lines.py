"""The lines of a bulk add: ``text<TAB>tag1,tag2<TAB>weight`` (tags and weight optional)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BulkLine", "BulkLineError", "clean_tags", "from_options", "parse_line"]

MAX_TEXT = 1000
MAX_TAG = 40
MAX_TAGS = 20
MAX_WEIGHT = 1e12


class BulkLineError(ValueError):
    """A line that cannot be read; the message says why."""


@dataclass(frozen=True)
class BulkLine:
    text: str
    tags: tuple[str, ...] | None  # None: the line gives no tags
    weight: float | None  # None: the line gives no weight


def parse_line(raw: str) -> BulkLine:
    """Return a line's query text, tags and weight; raise BulkLineError when one is invalid."""
    parts = raw.split("\t")
    if len(parts) > 3:
        raise BulkLineError("a line has at most three tab-separated parts: text, tags, weight")
    text = parts[0].strip()
    if len(text) > MAX_TEXT:
        raise BulkLineError(f"the query is longer than {MAX_TEXT} characters")
    tags = clean_tags(parts[1].split(",")) if len(parts) > 1 and parts[1].strip() else None
    weight = _weight(parts[2]) if len(parts) > 2 and parts[2].strip() else None
    return BulkLine(text=text, tags=tags, weight=weight)


def clean_tags(raw: list[str]) -> tuple[str, ...]:
    """Return the tags stripped, blanks and repeats dropped; raise when one is too long."""
    tags: list[str] = []
    for item in raw:
        tag = item.strip()
        if len(tag) > MAX_TAG:
            raise BulkLineError(f"tag {tag[:20]!r}… is longer than {MAX_TAG} characters")
        if tag and tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise BulkLineError(f"a query has at most {MAX_TAGS} tags")
    return tuple(tags)


def _weight(raw: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise BulkLineError(f"weight {raw.strip()!r} is not a number") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_WEIGHT:
        raise BulkLineError(f"weight {raw.strip()!r} must be a number greater than 0")
    return value


def from_options(options: object) -> tuple[list[str], float]:
    """Return the tags and weight a query's options carry (``tags``: a list or a comma
    separated text, ``weight``: a number > 0), as Quepid exports may; what does not fit the
    rules is left out (no tags, weight 1): the options keep it as it was."""
    if not isinstance(options, dict):
        return [], 1.0
    raw = options.get("tags")
    items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    try:
        tags = list(clean_tags([t for t in items if isinstance(t, str)]))
    except BulkLineError:
        tags = []
    weight = options.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        return tags, 1.0
    value = float(weight)
    return tags, value if math.isfinite(value) and 0 < value <= MAX_WEIGHT else 1.0
