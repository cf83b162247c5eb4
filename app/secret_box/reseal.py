"""Re-sealing the stored columns: under the newest key (rotation), or in another form
(the migrations that bind values to their rows, and their downgrades)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from sqlalchemy import Connection, update

from app.secret_box.columns import (
    SealedColumn,
    column_table,
    existing_columns,
    registered_columns,
    stored_values,
)
from app.secret_box.installed import current_keyring
from app.secret_box.keys import Keyring, SecretUnreadable
from app.secret_box.place import Place, is_sealed

__all__ = ["ResealMode", "ResealReport", "reseal_all", "reseal_column"]

ResealMode = Literal["reseal", "seal_plaintext", "unseal", "legacy"]
_Convert = Callable[[str, Place], str]


@dataclass
class ResealReport:
    """What a re-seal did: rows changed, and the values no key opens (table.column of row)."""

    resealed: int = 0
    unreadable: list[str] = field(default_factory=list)
    dropped: int = 0


class _Converted(NamedTuple):
    new: Any  # what the row is to hold
    lost: bool  # a value in it opens with no key (kept as it was, or dropped)


def _converter(ring: Keyring, mode: ResealMode) -> _Convert:
    """Return what turns one stored value, at its place, into the form ``mode`` stores."""

    def convert(value: str, place: Place) -> str:
        if mode == "unseal":
            return ring.unseal(value, place=place)
        if mode == "legacy":
            return ring.seal_legacy(ring.unseal(value, place=place))
        if mode == "seal_plaintext":
            return value if is_sealed(value) else ring.seal(value, place=place)
        return ring.reseal(value, place=place)

    return convert


def _convert_text(value: str, place: Place, convert: _Convert, *, drop: bool) -> _Converted:
    """Return one value converted, or (no key opens it) None when dropped, else as it was."""
    try:
        return _Converted(convert(value, place), lost=False)
    except SecretUnreadable:
        return _Converted(None if drop else value, lost=True)


def _convert_object(
    value: dict[str, Any], place: Place, convert: _Convert, *, drop: bool
) -> _Converted:
    """Return a JSON object with its texts converted (one no key opens: dropped or kept)."""
    new: dict[str, Any] = {}
    lost = False
    for name, v in value.items():
        if not isinstance(v, str):
            new[name] = v
            continue
        item = _convert_text(v, place.item(name), convert, drop=drop)
        lost = lost or item.lost
        if not (item.lost and drop):
            new[name] = item.new
    return _Converted(new, lost)


def _convert_row(
    spec: SealedColumn, row_id: int, value: Any, convert: _Convert, *, drop: bool
) -> _Converted | None:
    """Return one row's value converted, or None when it holds nothing to convert."""
    place = spec.place(row_id)
    if spec.kind != "json_values":
        return _convert_text(value, place, convert, drop=drop)
    if not isinstance(value, dict) or not value:
        return None
    return _convert_object(value, place, convert, drop=drop)


def _tally(report: ResealReport, place: Place, old: Any, row: _Converted, *, drop: bool) -> bool:
    """Count a converted row in ``report``; return whether its new value is to be stored."""
    if row.lost:
        report.unreadable.append(str(place))
        if not drop:
            return False  # the row stays as it is, its values that did open included
        report.dropped += 1
    if row.new == old:
        return False
    report.resealed += 0 if row.lost else 1
    return True


def reseal_column(
    connection: Connection,
    spec: SealedColumn,
    *,
    keyring: Keyring | None = None,
    report: ResealReport | None = None,
    mode: ResealMode = "reseal",
    write: bool = True,
    drop_unreadable: bool = False,
) -> ResealReport:
    """Re-seal every value of one column with the newest key, bound to its row.

    ``reseal`` opens each value (bound, ``sealed:v1:`` or plaintext) and seals it again for
    its place; ``seal_plaintext`` only seals values stored in plaintext (no key needs to open
    the sealed ones); ``unseal`` stores plaintext again and ``legacy`` the unbound
    ``sealed:v1:`` form (migrations' downgrades). A value no
    key opens is left as it is and named in the report, or, with ``drop_unreadable``,
    removed (a header, a key, a webhook's secret: to be entered again). The caller commits;
    with ``write=False`` nothing changes (a check: what would be re-sealed, what is unreadable).
    """
    report = report if report is not None else ResealReport()
    convert = _converter(keyring or current_keyring(), mode)
    tbl = column_table(spec)
    pk = tbl.c[spec.primary_key]
    for row_id, value in stored_values(connection, spec):
        row = _convert_row(spec, row_id, value, convert, drop=drop_unreadable)
        if row is None or not _tally(report, spec.place(row_id), value, row, drop=drop_unreadable):
            continue
        if write:
            connection.execute(update(tbl).where(pk == row_id).values({spec.column: row.new}))
    return report


def reseal_all(
    connection: Connection,
    *,
    keyring: Keyring | None = None,
    write: bool = True,
    drop_unreadable: bool = False,
) -> ResealReport:
    """Re-seal every registered column's values with the newest key (the caller commits)."""
    report = ResealReport()
    for spec in existing_columns(connection, registered_columns()):
        reseal_column(
            connection,
            spec,
            keyring=keyring,
            report=report,
            write=write,
            drop_unreadable=drop_unreadable,
        )
    return report
