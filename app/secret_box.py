"""Secrets encrypted at rest: ``seal`` before storing, ``unseal`` just before sending.

A sealed value is ``sealed:v1:`` followed by a Fernet token (AES-128-CBC with an
HMAC-SHA256, from the ``cryptography`` package), so it can be told apart from a plaintext
value written before encryption existed: :func:`unseal` returns such a legacy value as it
is, and the migrations and ``relevo secrets rotate`` seal it.

Keys come from ``RELEVO_ENCRYPTION_KEYS`` (comma-separated Fernet keys: the first seals,
all unseal) or, when that is unset, from a key generated once and kept in the data
directory (``encryption_key``). The process installs its key ring when it starts
(:func:`install_keyring`, from ``create_app`` and the ``relevo`` command); code that runs
before that gets the key ring the environment describes.

Domains that store secrets register their columns (:func:`register_sealed_column`) so that
:func:`reseal_all` (``relevo secrets rotate``) re-seals them with the newest key.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import JSON, Column, Connection, Integer, Text, select, table, update
from sqlalchemy.dialects.postgresql import JSONB

__all__ = [
    "ENV_VAR",
    "KEY_FILE",
    "PREFIX",
    "KeyConfigError",
    "Keyring",
    "ResealReport",
    "SealedColumn",
    "SecretUnreadable",
    "current_keyring",
    "install_keyring",
    "is_sealed",
    "register_sealed_column",
    "registered_columns",
    "reseal_all",
    "reseal_column",
    "seal",
    "seal_values",
    "unseal",
    "unseal_values",
]

PREFIX = "sealed:v1:"
ENV_VAR = "RELEVO_ENCRYPTION_KEYS"
KEY_FILE = "encryption_key"


class SecretUnreadable(ValueError):
    """A sealed value that none of the configured keys opens (or a damaged one)."""


class KeyConfigError(ValueError):
    """RELEVO_ENCRYPTION_KEYS or the key file holds something that is not a Fernet key."""


@dataclass(frozen=True)
class Keyring:
    """The encryption keys: the first seals, every one unseals."""

    keys: tuple[str, ...]
    _fernet: MultiFernet = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise KeyConfigError("at least one encryption key is needed")
        fernets = []
        for n, key in enumerate(self.keys, start=1):
            try:
                fernets.append(Fernet(key.encode("ascii")))
            except (ValueError, UnicodeEncodeError):
                raise KeyConfigError(
                    f"encryption key number {n} is not a Fernet key (32 url-safe base64-encoded "
                    "bytes; make one with `relevo secrets new-key`)"
                ) from None
        object.__setattr__(self, "_fernet", MultiFernet(fernets))

    def __repr__(self) -> str:  # never show the keys
        return f"Keyring({len(self.keys)} keys)"

    @classmethod
    def parse(cls, raw: str) -> Keyring:
        """Return the key ring of a comma-separated list of keys."""
        return cls(tuple(part.strip() for part in raw.split(",") if part.strip()))

    @classmethod
    def load(cls, *, keys: Iterable[str] = (), data_dir: Path) -> Keyring:
        """Return the given keys, or the data directory's key (generated on first use)."""
        given = tuple(k.strip() for k in keys if k.strip())
        if given:
            return cls(given)
        return cls((_data_dir_key(data_dir),))

    def seal(self, plaintext: str) -> str:
        return PREFIX + self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def unseal(self, token: str) -> str:
        if not is_sealed(token):
            return token  # a value stored before encryption at rest
        try:
            return self._fernet.decrypt(token[len(PREFIX) :].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError):
            raise SecretUnreadable(
                "a stored secret cannot be decrypted with the configured encryption keys "
                f"({ENV_VAR} or the data directory's {KEY_FILE}): restore the key it was "
                "sealed with, or enter the secret again"
            ) from None

    def reseal(self, value: str) -> str:
        """Return ``value`` sealed with the first key (plaintext is sealed, tokens re-sealed)."""
        if not is_sealed(value):
            return self.seal(value)
        try:
            rotated = self._fernet.rotate(value[len(PREFIX) :].encode("ascii"))
        except (InvalidToken, UnicodeError):
            self.unseal(value)  # raises the clear message
            raise  # pragma: no cover
        return PREFIX + rotated.decode("ascii")


def _data_dir_key(data_dir: Path) -> str:
    path = data_dir / KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        key = Fernet.generate_key()
        try:  # exclusive: two processes starting together keep the same key
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(key + b"\n")
            return key.decode("ascii")
    text = path.read_text().strip()
    if not text:
        raise KeyConfigError(f"{path} is empty: restore the key or set {ENV_VAR}")
    return text


def is_sealed(value: str) -> bool:
    """Whether ``value`` is a sealed token (not a plaintext legacy value)."""
    return value.startswith(PREFIX)


_lock = threading.Lock()
_installed: Keyring | None = None


def install_keyring(keyring: Keyring | None) -> Keyring | None:
    """Make ``keyring`` the process's key ring; return the previous one (None: from env)."""
    global _installed
    with _lock:
        previous, _installed = _installed, keyring
    return previous


def current_keyring() -> Keyring:
    """Return the installed key ring, or the one the environment describes."""
    global _installed
    with _lock:
        if _installed is None:
            env = os.environ
            _installed = Keyring.load(
                keys=env.get(ENV_VAR, "").split(","),
                data_dir=Path(env.get("RELEVO_DATA_DIR", ".relevo")),
            )
        return _installed


def seal(plaintext: str) -> str:
    """Return ``plaintext`` encrypted with the newest key; a sealed value is kept as it is."""
    if is_sealed(plaintext):
        return plaintext
    return current_keyring().seal(plaintext)


def unseal(token: str) -> str:
    """Return the plaintext of a sealed value (a legacy plaintext value as it is).

    Raises :class:`SecretUnreadable` when no configured key opens it.
    """
    return current_keyring().unseal(token)


def seal_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return a mapping (headers, say) with every string value sealed; names stay readable."""
    return {name: seal(v) if isinstance(v, str) else v for name, v in values.items()}


def unseal_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return a mapping with every sealed string value opened (raises SecretUnreadable)."""
    return {name: unseal(v) if isinstance(v, str) else v for name, v in values.items()}


# --- the columns that hold sealed values, for rotation ---

ColumnKind = Literal["text", "json_values"]


@dataclass(frozen=True)
class SealedColumn:
    """A column of sealed values: ``text`` (one value) or ``json_values`` (an object's values)."""

    table: str
    column: str
    kind: ColumnKind = "text"
    primary_key: str = "id"


_registry: dict[tuple[str, str], SealedColumn] = {}
_JSON = JSON().with_variant(JSONB(), "postgresql")


def register_sealed_column(
    table_name: str, column: str, *, kind: ColumnKind = "text", primary_key: str = "id"
) -> SealedColumn:
    """Declare a column of sealed values so that ``relevo secrets rotate`` re-seals it."""
    spec = SealedColumn(table_name, column, kind, primary_key)
    _registry[(table_name, column)] = spec
    return spec


def registered_columns() -> list[SealedColumn]:
    """Return the registered columns, by table and column name."""
    return [_registry[k] for k in sorted(_registry)]


@dataclass
class ResealReport:
    """What a re-seal did: rows changed, and the values no key opens (table.column of row)."""

    resealed: int = 0
    unreadable: list[str] = field(default_factory=list)


def reseal_column(
    connection: Connection,
    spec: SealedColumn,
    *,
    keyring: Keyring | None = None,
    report: ResealReport | None = None,
    mode: Literal["reseal", "seal_plaintext", "unseal"] = "reseal",
    write: bool = True,
) -> ResealReport:
    """Re-seal every value of one column with the newest key (plaintext gets sealed).

    ``seal_plaintext`` only seals values stored in plaintext (a migration: no key needs to
    open the sealed ones); ``unseal`` stores plaintext again (a migration's downgrade).
    A value no key opens is left as it is and named in the report. The caller commits;
    with ``write=False`` nothing changes (a check: what would be re-sealed, what is unreadable).
    """
    ring = keyring or current_keyring()
    report = report if report is not None else ResealReport()

    def convert(value: str) -> str:
        if mode == "unseal":
            return ring.unseal(value)
        if mode == "seal_plaintext":
            return value if is_sealed(value) else ring.seal(value)
        return ring.reseal(value)

    value_type = _JSON if spec.kind == "json_values" else Text()
    tbl = table(spec.table, Column(spec.primary_key, Integer), Column(spec.column, value_type))
    pk, col = tbl.c[spec.primary_key], tbl.c[spec.column]
    rows = connection.execute(select(pk, col).where(col.is_not(None)).order_by(pk)).all()
    for row_id, value in rows:
        where = f"{spec.table}.{spec.column} of row {row_id}"
        try:
            if spec.kind == "json_values":
                if not isinstance(value, dict) or not value:
                    continue
                new: Any = {
                    name: convert(v) if isinstance(v, str) else v for name, v in value.items()
                }
            else:
                new = convert(value)
        except SecretUnreadable:
            report.unreadable.append(where)
            continue
        if new != value:
            if write:
                connection.execute(update(tbl).where(pk == row_id).values({spec.column: new}))
            report.resealed += 1
    return report


def reseal_all(
    connection: Connection, *, keyring: Keyring | None = None, write: bool = True
) -> ResealReport:
    """Re-seal every registered column's values with the newest key (the caller commits)."""
    report = ResealReport()
    for spec in registered_columns():
        reseal_column(connection, spec, keyring=keyring, report=report, write=write)
    return report
