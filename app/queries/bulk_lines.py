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


def from_options(options: object) -> tuple[list[str], float, list[str]]:
    """Return the tags and weight a query's options carry (``tags``: a list or a comma
    separated text, ``weight``: a number > 0), as Quepid exports may, and what was left out.

    A tag that is too long or not text is left out; beyond 20 tags, the first 20 are kept; a
    weight that is not a number > 0 weighs 1. Each such problem is said in the third value
    (the options keep everything as it was).
    """
    if not isinstance(options, dict):
        return [], 1.0, []
    problems: list[str] = []
    raw = options.get("tags")
    items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    if raw is not None and not isinstance(raw, str | list):
        problems.append("its tags are neither a list nor a text and were left out")
    tags: list[str] = []
    too_long: list[str] = []
    for item in items:
        tag = item.strip() if isinstance(item, str) else None
        if tag is None or len(tag) > MAX_TAG:
            too_long.append(f"{tag[:20]!r}…" if tag is not None else repr(item)[:20])
        elif tag and tag not in tags:
            tags.append(tag)
    if too_long:
        problems.append(
            f"{len(too_long)} tag(s) longer than {MAX_TAG} characters or not text were left "
            f"out ({', '.join(too_long[:3])}{'…' if len(too_long) > 3 else ''})"
        )
    if len(tags) > MAX_TAGS:
        problems.append(
            f"it has {len(tags)} tags; a query keeps at most {MAX_TAGS}: "
            f"{', '.join(tags[MAX_TAGS:][:5])}{'…' if len(tags) > MAX_TAGS + 5 else ''} "
            "were left out"
        )
        tags = tags[:MAX_TAGS]
    weight = options.get("weight")
    if weight is None:
        return tags, 1.0, problems
    value = (
        float(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else None
    )
    if value is None or not math.isfinite(value) or not 0 < value <= MAX_WEIGHT:
        problems.append(f"its weight {weight!r:.30} is not a number greater than 0: it weighs 1")
        return tags, 1.0, problems
    return tags, value, problems
