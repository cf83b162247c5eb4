"""The form of a stored secret, and the place a sealed value is bound to."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

__all__ = ["PREFIX", "PREFIX_V1", "Place", "is_sealed"]

PREFIX = "sealed:v2:"
PREFIX_V1 = "sealed:v1:"


@dataclass(frozen=True)
class Place:
    """Where a sealed value is stored; it opens there and nowhere else."""

    table: str
    column: str
    row_id: int | None
    name: str | None = None  # the key of a value in a JSON object (a header's name)

    def associated_data(self) -> bytes:
        """Return the AES-GCM associated data that binds a value to this place."""
        return json.dumps(
            [self.table, self.column, self.row_id, self.name], separators=(",", ":")
        ).encode("utf-8")

    def item(self, name: str) -> Place:
        """Return the place of one value of a JSON object stored here."""
        return replace(self, name=name)

    def __str__(self) -> str:
        return f"{self.table}.{self.column} of row {self.row_id}"


def is_sealed(value: str) -> bool:
    """Whether a stored ``value`` is a sealed token (not a plaintext legacy value)."""
    return value.startswith((PREFIX, PREFIX_V1))
