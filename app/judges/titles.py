"""A book's documents by title: which stored field names them, and each pair's title.

A pair keeps the document's fields as they were judged, not the field spec that chose them,
so the title field comes from the cases the book feeds (their current try's ``title:``),
then the usual names ``title`` and ``name``. A pair without any of them has no title (its
doc id is shown alone). Here rather than in ``app.books`` because the judge pages use it too
(books build on judges, not the reverse).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from app.models import Case, CaseBookSync, Try
from app.search import FieldSpecError, parse_field_spec
from app.search.fieldspec import is_missing, lookup_field

__all__ = ["FALLBACK_FIELDS", "pair_title", "title_fields"]

FALLBACK_FIELDS = ("title", "name")
TITLE_CHARS = 300


def title_fields(*, session: Session, book_id: int) -> list[str]:
    """Return the fields that may hold a book's document titles, the likeliest first."""
    stmt = (
        select(Try.field_spec)
        .join(Case, and_(Case.id == Try.case_id, Case.current_try_number == Try.number))
        .join(CaseBookSync, CaseBookSync.case_id == Case.id)
        .where(CaseBookSync.book_id == book_id)
        .order_by(CaseBookSync.synced_at.desc(), Case.id)
    )
    named: list[str] = []
    for spec in session.scalars(stmt):
        try:
            field = parse_field_spec(spec).title_field
        except FieldSpecError:  # a spec saved before a rule tightened: no title from it
            continue
        if field:
            named.append(field)
    return list(dict.fromkeys([*named, *FALLBACK_FIELDS]))


def pair_title(fields: Mapping[str, Any] | None, names: Sequence[str]) -> str | None:
    """Return the pair's title as text (the first of ``names`` it has), or None."""
    if not isinstance(fields, Mapping):
        return None
    for name in names:
        value = lookup_field(fields, name)
        if is_missing(value) or value is None:
            continue
        text = _text(value).strip()
        if text:
            return text[:TITLE_CHARS]
    return None


def _text(value: Any) -> str:
    """Return a stored field value as text, as result lists show it: lists joined, objects
    as JSON."""
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
