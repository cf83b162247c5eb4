"""Sealing what the ORM writes: every value set in clear is sealed when it is flushed."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect, update
from sqlalchemy.orm import Session, UOWTransaction
from sqlalchemy.orm.attributes import set_committed_value

from app.secret_box.columns import SealedColumn, opened_form, registered_column, sealed_form
from app.secret_box.installed import current_keyring

__all__ = ["opened", "seal_on_flush"]

_models: dict[type, list[SealedColumn]] = {}
_PENDING = "relevo_secrets_to_seal"


def seal_on_flush(model: type, *columns: str) -> None:
    """Have the ORM seal these registered columns of ``model`` whenever they are written.

    Whatever code sets on these attributes is plaintext (a value that looks sealed included:
    it is sealed again, never stored as it is); it is sealed for its row at flush time, so
    a new row's values are sealed once the row has its id.
    """
    table_name = model.__tablename__  # type: ignore[attr-defined]
    _models[model] = [registered_column(table_name, column) for column in columns]


def opened(obj: Any, column: str) -> Any:
    """Return an ORM object's stored secret in clear: text or None, or an object of texts.

    Raises :class:`SecretUnreadable` when no configured key opens it at the object's row.
    """
    (spec,) = [s for s in _models[type(obj)] if s.column == column]
    row_id = getattr(obj, spec.primary_key)
    return opened_form(spec, getattr(obj, column), row_id, current_keyring())


def _empty(spec: SealedColumn) -> Any:
    return {} if spec.kind == "json_values" else None


def _seal_object(obj: Any, specs: list[SealedColumn]) -> dict[str, Any]:
    """Seal the secrets set on ``obj``; return those of a row still without its id, in clear."""
    state = inspect(obj)
    unsealed: dict[str, Any] = {}
    for spec in specs:
        attribute = state.attrs[spec.column]
        if not attribute.history.added or not attribute.value:
            continue
        row_id = getattr(obj, spec.primary_key)
        if row_id is None:  # inserted without it, sealed right after the insert
            unsealed[spec.column] = attribute.value
            setattr(obj, spec.column, _empty(spec))
        else:
            setattr(obj, spec.column, sealed_form(spec, attribute.value, row_id, current_keyring()))
    return unsealed


@event.listens_for(Session, "before_flush")
def _seal_before_flush(session: Session, _context: UOWTransaction, _instances: Any) -> None:
    """Seal the secrets set since the last flush; a new row's wait for its id (below)."""
    waiting: list[Any] = []
    for obj in (*session.new, *session.dirty):
        specs = _models.get(type(obj))
        if not specs:
            continue
        unsealed = _seal_object(obj, specs)
        if unsealed:
            inspect(obj).info[_PENDING] = unsealed
            waiting.append(obj)
    session.info[_PENDING] = waiting


@event.listens_for(Session, "after_flush_postexec")
def _seal_after_insert(session: Session, _context: UOWTransaction) -> None:
    """Seal the secrets of the rows just inserted, now that they have their ids."""
    for obj in session.info.pop(_PENDING, []):
        state = inspect(obj)
        unsealed = state.info.pop(_PENDING, None)
        if not unsealed or state.key is None:
            continue
        specs = {s.column: s for s in _models[type(obj)]}
        row_id = getattr(obj, specs[next(iter(unsealed))].primary_key)
        sealed = {
            column: sealed_form(specs[column], value, row_id, current_keyring())
            for column, value in unsealed.items()
        }
        mapped_table = inspect(type(obj)).local_table
        pk = mapped_table.c[specs[next(iter(unsealed))].primary_key]
        session.connection().execute(update(mapped_table).where(pk == row_id).values(sealed))
        for column, value in sealed.items():
            set_committed_value(obj, column, value)
