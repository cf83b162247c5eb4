"""Field spec parsing and field extraction from engine documents.

A field spec says what to show for each document, for example
``id:_id title:title overview cast thumb:poster``. Tokens are separated by whitespace or
commas. ``id:`` names the unique id field (``id`` when omitted), ``title:`` the title,
``thumb:`` and ``image:`` image URLs; bare names are sub-fields shown under the title.
Names may be dotted (``author.name``) to reach into nested objects.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.search.errors import EngineResponseError, FieldSpecError
from app.search.types import Doc

__all__ = ["FieldSpec", "build_doc", "doc_id", "is_missing", "lookup_field", "parse_field_spec"]

_ROLES = ("id", "title", "thumb", "image")
_NAME = re.compile(r"^[A-Za-z0-9_@$][\w.@$\-]*$")
_MISSING = object()


@dataclass(frozen=True)
class FieldSpec:
    """A parsed field spec."""

    id_field: str = "id"
    title_field: str | None = None
    sub_fields: tuple[str, ...] = ()
    thumb_field: str | None = None
    image_field: str | None = None

    def all_fields(self) -> list[str]:
        """Return every field named by the spec, id first, without duplicates."""
        return list(self._all)

    def display_fields(self) -> list[str]:
        """Return the fields shown for a document (every field but the id)."""
        return list(self.display_names)

    # Computed once per spec: parsing a response asks for them for every hit.
    @functools.cached_property
    def _all(self) -> tuple[str, ...]:
        names = [self.id_field, self.title_field, *self.sub_fields]
        names += [self.thumb_field, self.image_field]
        return tuple(dict.fromkeys(n for n in names if n))

    @functools.cached_property
    def display_names(self) -> tuple[str, ...]:
        """The display fields as a tuple, computed once."""
        return tuple(n for n in self._all if n != self.id_field)


@functools.lru_cache(maxsize=256)
def parse_field_spec(spec: str) -> FieldSpec:
    """Return the :class:`FieldSpec` for ``spec``; raise FieldSpecError naming a bad token."""
    roles: dict[str, str] = {}
    subs: list[str] = []
    for token in re.split(r"[\s,]+", spec.strip()):
        if not token:
            continue
        role, sep, name = token.partition(":")
        if not sep:
            role, name = "", token
        elif role not in _ROLES:
            raise FieldSpecError(
                f"field spec token {token!r}: unknown prefix {role!r}; "
                f"use one of {', '.join(r + ':' for r in _ROLES)} or a bare field name"
            )
        if not _NAME.match(name):
            raise FieldSpecError(f"field spec token {token!r}: {name!r} is not a field name")
        if not role:
            subs.append(name)
        elif role in roles:
            raise FieldSpecError(f"field spec token {token!r}: {role!r} is given twice")
        else:
            roles[role] = name
    if not roles and not subs:
        raise FieldSpecError("field spec is empty; expected e.g. 'id:id title:title'")
    return FieldSpec(
        id_field=roles.get("id", "id"),
        title_field=roles.get("title"),
        sub_fields=tuple(dict.fromkeys(subs)),
        thumb_field=roles.get("thumb"),
        image_field=roles.get("image"),
    )


def lookup_field(doc: Mapping[str, Any], name: str) -> Any:
    """Return the value of ``name`` in ``doc`` (dotted names reach into objects) or a sentinel.

    A literal key wins over a nested path. Walking through a list of objects collects the
    values of every element, so ``authors.name`` gives a list of names.
    """
    if name in doc:
        return doc[name]
    head, dot, rest = name.partition(".")
    if not dot or head not in doc:
        return _MISSING
    return _descend(doc[head], rest)


def _descend(value: Any, rest: str) -> Any:
    if isinstance(value, dict):  # parsed JSON (a dict check is cheaper than the ABC's)
        return lookup_field(value, rest)
    if isinstance(value, list):
        found = [_descend(item, rest) for item in value]
        found = [f for f in found if f is not _MISSING]
        flat: list[Any] = []
        for item in found:
            flat.extend(item if isinstance(item, list) else [item])
        return flat if flat else _MISSING
    return _MISSING


def is_missing(value: Any) -> bool:
    """Return True when :func:`lookup_field` found nothing."""
    return value is _MISSING


def doc_id(raw: Any, *, position: int, id_field: str) -> str:
    """Return the document id as a string; raise EngineResponseError if unusable."""
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    if raw is _MISSING or raw is None:
        raise EngineResponseError(f"doc {position} has no id field {id_field!r}")
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise EngineResponseError(
            f"doc {position} has an id field {id_field!r} that is not a single value"
        )
    return str(raw)


def build_doc(
    source: Mapping[str, Any], spec: FieldSpec, *, position: int, raw_id: Any, explain: Any
) -> Doc:
    """Return a :class:`Doc` holding the spec's display fields found in ``source``."""
    fields: dict[str, Any] = {}
    for name in spec.display_fields():
        value = lookup_field(source, name)
        if value is not _MISSING:
            fields[name] = value
    ident = doc_id(raw_id, position=position, id_field=spec.id_field)
    return Doc(id=ident, position=position, fields=fields, explain=explain)
