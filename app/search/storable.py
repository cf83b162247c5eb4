"""What an engine or a mapper says about a doc, made storable and showable.

Every engine's answer becomes :class:`app.search.types.Doc` objects, whatever the engine
(native parsers, a search API's mapper, a result file): that is where this applies. Text
loses what PostgreSQL cannot store (NUL, unpaired surrogates: U+FFFD instead, as for
answers read whole), numbers that JSON cannot hold (NaN, infinities) become null, and
objects and lists nested deeper than a bound are cut there (``…``): a hostile answer is
stored and shown, never a failed write or a failed page.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "CUT",
    "MAX_EXPLAIN_DEPTH",
    "MAX_FIELD_DEPTH",
    "MAX_NUM_FOUND",
    "storable",
    "storable_count",
    "storable_text",
]

# A doc's fields nest this deep at most (an object in a list in an object is 3): far beyond
# any displayed field; an explain tree nests deeper (two levels per clause).
MAX_FIELD_DEPTH = 32
MAX_EXPLAIN_DEPTH = 64
# What stands for a value nested deeper than the bound.
CUT = "…"
# A hit count is stored as a 32-bit integer.
MAX_NUM_FOUND = 2**31 - 1

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """Return ``text`` with NUL and unpaired surrogates replaced by U+FFFD."""
    # The usual text is ASCII without a NUL: two scans in C, no pattern.
    return text if _plain(text) else _UNSTORABLE.sub("\ufffd", text)


def storable(value: Any, depth: int) -> Any:
    """Return ``value`` (parsed JSON) storable: text cleaned (keys too), non-finite numbers
    null, and any object or list below ``depth`` levels replaced by :data:`CUT`."""
    kind = type(value)
    if kind is dict:
        if depth < 1:
            return CUT
        # Leaves are handled in the loop: a call per value would cost more than the check.
        cleaned = {}
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or "\x00" in key:
                key = storable_text(str(key))
            if type(item) is str:
                if not item.isascii() or "\x00" in item:
                    item = _UNSTORABLE.sub("\ufffd", item)
            elif item is not None and type(item) is not int and type(item) is not bool:
                item = storable(item, depth - 1)
            cleaned[key] = item
        return cleaned
    if kind is list or kind is tuple:
        if depth < 1:
            return CUT
        return [
            item
            if type(item) is int or item is None or (type(item) is str and _plain(item))
            else storable(item, depth - 1)
            for item in value
        ]
    if kind is str:
        return storable_text(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if isinstance(value, str | dict | list | tuple | float) and kind is not bool:
        return storable(kind.__mro__[1](value), depth)  # a subclass: the same rules
    return value


def _plain(text: str) -> bool:
    return text.isascii() and "\x00" not in text


def storable_count(count: int) -> int:
    """Return a hit count within what is stored (0 to 2³¹-1)."""
    return max(0, min(count, MAX_NUM_FOUND))
