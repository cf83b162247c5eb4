"""A query's notes form: its information need and notes, edited under the query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from app.queries.schemas import NOTES_MAX_LENGTH, QueryUpdate
from app.web_common.forms import WebForm

__all__ = ["NotesForm"]


class NotesForm(WebForm):
    """A query's information need and notes, edited under the query on the case page."""

    fields: ClassVar[tuple[str, ...]] = ("information_need", "notes")
    labels: ClassVar[Mapping[str, str]] = {
        "information_need": "The information need",
        "notes": "Notes",
    }

    def body(self) -> QueryUpdate:
        """Return the query's new notes; a blank box clears its note."""
        values = {name: str(self.values[name]) for name in self.fields}
        for name, value in values.items():
            if len(value) > NOTES_MAX_LENGTH:
                self.fail(
                    name,
                    f"{self.labels[name]} is {len(value):,} characters long; at most "
                    f"{NOTES_MAX_LENGTH:,} are kept. Shorten it and save again.",
                )
        kept = {name: value if value.strip() else None for name, value in values.items()}
        return self.validate(QueryUpdate, kept)
