"""The columns that hold sealed values, and their values sealed or opened for their rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import JSON, Column, Connection, Integer, Text, inspect, select, table
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.expression import TableClause

from app.secret_box.keys import Keyring
from app.secret_box.place import Place

__all__ = [
    "ColumnKind",
    "SealedColumn",
    "column_table",
    "existing_columns",
    "opened_form",
    "register_sealed_column",
    "registered_column",
    "registered_columns",
    "sealed_form",
    "stored_values",
]

ColumnKind = Literal["text", "json_values"]


@dataclass(frozen=True)
class SealedColumn:
    """A column of sealed values: ``text`` (one value) or ``json_values`` (an object's values)."""

    table: str
    column: str
    kind: ColumnKind = "text"
    primary_key: str = "id"

    def place(self, row_id: int | None) -> Place:
        """Return the place of this column's value in row ``row_id``."""
        return Place(self.table, self.column, row_id)


_registry: dict[tuple[str, str], SealedColumn] = {}
_JSON = JSON().with_variant(JSONB(), "postgresql")


def register_sealed_column(
    table_name: str, column: str, *, kind: ColumnKind = "text", primary_key: str = "id"
) -> SealedColumn:
    """Declare a column of sealed values so that ``relevo secrets rotate`` re-seals it."""
    spec = SealedColumn(table_name, column, kind, primary_key)
    _registry[(table_name, column)] = spec
    return spec


def registered_column(table_name: str, column: str) -> SealedColumn:
    """Return the registered column ``column`` of ``table_name`` (KeyError: not registered)."""
    return _registry[(table_name, column)]


def registered_columns() -> list[SealedColumn]:
    """Return the registered columns, by table and column name."""
    return [_registry[k] for k in sorted(_registry)]


def sealed_form(spec: SealedColumn, value: Any, row_id: int | None, ring: Keyring) -> Any:
    """Return a value given in clear (text, or an object of texts) sealed for its row."""
    place = spec.place(row_id)
    if spec.kind == "json_values":
        return {
            name: ring.seal(v, place=place.item(name)) if isinstance(v, str) else v
            for name, v in value.items()
        }
    return ring.seal(value, place=place)


def opened_form(spec: SealedColumn, value: Any, row_id: int | None, ring: Keyring) -> Any:
    """Return a stored value (text or None, or an object of texts) opened for its row."""
    place = spec.place(row_id)
    if spec.kind == "json_values":
        return {
            name: ring.unseal(v, place=place.item(name)) if isinstance(v, str) else v
            for name, v in (value or {}).items()
        }
    return None if value is None else ring.unseal(value, place=place)


def column_table(spec: SealedColumn) -> TableClause:
    """Return a lightweight table of the column and its row's primary key, for Core queries."""
    value_type = _JSON if spec.kind == "json_values" else Text()
    return table(spec.table, Column(spec.primary_key, Integer), Column(spec.column, value_type))


def stored_values(connection: Connection, spec: SealedColumn) -> Iterator[tuple[int, Any]]:
    """Yield each row id with its stored value (rows holding NULL left out), by row id."""
    tbl = column_table(spec)
    pk, col = tbl.c[spec.primary_key], tbl.c[spec.column]
    yield from connection.execute(select(pk, col).where(col.is_not(None)).order_by(pk)).all()


def existing_columns(connection: Connection, specs: Sequence[SealedColumn]) -> list[SealedColumn]:
    """Return the columns the database has (one not yet migrated may lack some)."""
    inspector = inspect(connection)
    tables = set(inspector.get_table_names())
    columns = {
        name: {c["name"] for c in inspector.get_columns(name)}
        for name in {spec.table for spec in specs} & tables
    }
    return [spec for spec in specs if spec.column in columns.get(spec.table, ())]
