"""Secrets encrypted at rest, each bound to where it is stored.

A sealed value is ``sealed:v2:`` followed by the URL-safe base64 of a 12-byte nonce and
an AES-256-GCM ciphertext whose associated data is the value's place: table, column, row id
(and, for a JSON object of secrets such as headers, the name it is stored under). A value
copied to another row or column does not open there, so a sealed value typed into a form is
never a way to have Relevo decrypt someone else's secret: whatever a user sends is sealed
as it is, at flush time, once the row has its id (:func:`seal_on_flush`).

``sealed:v1:`` values (a Fernet token, bound to nothing) come from older versions: they
still open, and the migration (or, for those no key opened then, ``relevo secrets rotate``)
re-seals them in the bound form. A value with neither prefix was stored before encryption
existed and reads as it is.

Keys come from ``RELEVO_ENCRYPTION_KEYS`` (comma-separated Fernet keys: the first seals,
all unseal; the AES key of each is derived from it with HKDF) or, when that is unset, from
a key generated once and kept in the data directory (``encryption_key``). The processes
install their key ring when they start (:func:`prepare_keyring`), which refuses to start
when the database holds sealed values that no configured key opens, and never generates a
key for a database that already holds sealed values.

Domains that store secrets register their columns (:func:`register_sealed_column`) so that
:func:`reseal_all` (``relevo secrets rotate``) re-seals them with the newest key.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidTag
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import (
    JSON,
    Column,
    Connection,
    Engine,
    Integer,
    Text,
    event,
    inspect,
    select,
    table,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session, UOWTransaction
from sqlalchemy.orm.attributes import set_committed_value

__all__ = [
    "ENV_VAR",
    "KEY_FILE",
    "PREFIX",
    "PREFIX_V1",
    "KeyConfigError",
    "Keyring",
    "Place",
    "ResealReport",
    "SealedColumn",
    "SecretUnreadable",
    "SecretsLocked",
    "check_keys",
    "current_keyring",
    "install_keyring",
    "is_sealed",
    "keyring_for_database",
    "opened",
    "prepare_keyring",
    "register_sealed_column",
    "registered_columns",
    "reseal_all",
    "reseal_column",
    "seal",
    "seal_on_flush",
    "unreadable_secrets",
    "unseal",
]

PREFIX = "sealed:v2:"
PREFIX_V1 = "sealed:v1:"
ENV_VAR = "RELEVO_ENCRYPTION_KEYS"
KEY_FILE = "encryption_key"
_NONCE_BYTES = 12
_HKDF_INFO = b"relevo sealed:v2 AES-256-GCM"


class SecretUnreadable(ValueError):
    """A sealed value that none of the configured keys opens here (or a damaged one)."""


class KeyConfigError(ValueError):
    """RELEVO_ENCRYPTION_KEYS or the key file holds something that is not a Fernet key."""


class SecretsLocked(KeyConfigError):
    """The database holds sealed values the configured keys do not open: do not start."""


@dataclass(frozen=True)
class Place:
    """Where a sealed value is stored; it opens there and nowhere else."""

    table: str
    column: str
    row_id: int | None
    name: str | None = None  # the key of a value in a JSON object (a header's name)

    def associated_data(self) -> bytes:
        return json.dumps(
            [self.table, self.column, self.row_id, self.name], separators=(",", ":")
        ).encode("utf-8")

    def item(self, name: str) -> Place:
        """Return the place of one value of a JSON object stored here."""
        return replace(self, name=name)

    def __str__(self) -> str:
        return f"{self.table}.{self.column} of row {self.row_id}"


def _aes_key(fernet_key: str) -> AESGCM:
    raw = base64.urlsafe_b64decode(fernet_key.encode("ascii"))
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(raw)
    return AESGCM(derived)


@dataclass(frozen=True)
class Keyring:
    """The encryption keys: the first seals, every one unseals."""

    keys: tuple[str, ...]
    _fernet: MultiFernet = field(init=False, repr=False, compare=False)
    _aes: tuple[AESGCM, ...] = field(init=False, repr=False, compare=False)

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
        object.__setattr__(self, "_aes", tuple(_aes_key(key) for key in self.keys))

    def __repr__(self) -> str:  # never show the keys
        return f"Keyring({len(self.keys)} keys)"

    @classmethod
    def parse(cls, raw: str) -> Keyring:
        """Return the key ring of a comma-separated list of keys."""
        return cls(tuple(part.strip() for part in raw.split(",") if part.strip()))

    @classmethod
    def configured(cls, *, keys: Iterable[str] = (), data_dir: Path) -> Keyring | None:
        """Return the given keys, else the data directory's key file, else None (no key yet)."""
        given = tuple(k.strip() for k in keys if k.strip())
        if given:
            return cls(given)
        path = data_dir / KEY_FILE
        return cls((_read_key_file(path),)) if path.exists() else None

    @classmethod
    def load(cls, *, keys: Iterable[str] = (), data_dir: Path) -> Keyring:
        """Return the given keys, or the data directory's key (generated on first use)."""
        return cls.configured(keys=keys, data_dir=data_dir) or cls((_data_dir_key(data_dir),))

    def seal(self, plaintext: str, *, place: Place) -> str:
        """Return ``plaintext`` sealed with the first key, opening only at ``place``."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aes[0].encrypt(nonce, plaintext.encode("utf-8"), place.associated_data())
        return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def unseal(self, token: str, *, place: Place) -> str:
        """Return the plaintext of a value stored at ``place`` (raises SecretUnreadable)."""
        if token.startswith(PREFIX):
            return self._open_v2(token, place)
        if token.startswith(PREFIX_V1):
            try:
                raw = self._fernet.decrypt(token[len(PREFIX_V1) :].encode("ascii"))
                return raw.decode("utf-8")
            except (InvalidToken, UnicodeError):
                raise _unreadable() from None
        return token  # a value stored before encryption at rest

    def _open_v2(self, token: str, place: Place) -> str:
        try:
            blob = base64.urlsafe_b64decode(token[len(PREFIX) :].encode("ascii"))
        except (ValueError, UnicodeError):
            raise _unreadable() from None
        nonce, sealed = blob[:_NONCE_BYTES], blob[_NONCE_BYTES:]
        aad = place.associated_data()
        for aes in self._aes:
            try:
                return aes.decrypt(nonce, sealed, aad).decode("utf-8")
            except (InvalidTag, ValueError, UnicodeError):
                continue
        raise _unreadable()

    def seal_legacy(self, plaintext: str) -> str:
        """Return ``plaintext`` in the unbound ``sealed:v1:`` form (for a downgrade only)."""
        return PREFIX_V1 + self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def reseal(self, value: str, *, place: Place) -> str:
        """Return ``value`` sealed with the first key for ``place`` (plaintext gets sealed)."""
        return self.seal(self.unseal(value, place=place), place=place)


def _unreadable() -> SecretUnreadable:
    return SecretUnreadable(
        "a stored secret cannot be decrypted with the configured encryption keys "
        f"({ENV_VAR} or the data directory's {KEY_FILE}): restore the key it was "
        "sealed with, or enter the secret again"
    )


def _read_key_file(path: Path) -> str:
    text = path.read_text().strip()
    if not text:
        raise KeyConfigError(f"{path} is empty: restore the key or set {ENV_VAR}")
    return text


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
    return _read_key_file(path)


def is_sealed(value: str) -> bool:
    """Whether a stored ``value`` is a sealed token (not a plaintext legacy value)."""
    return value.startswith((PREFIX, PREFIX_V1))


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


def seal(plaintext: str, *, place: Place) -> str:
    """Return ``plaintext`` sealed with the newest key for ``place``, whatever it looks like."""
    return current_keyring().seal(plaintext, place=place)


def unseal(token: str, *, place: Place) -> str:
    """Return the plaintext of the value stored at ``place`` (a legacy plaintext as it is).

    Raises :class:`SecretUnreadable` when no configured key opens it there.
    """
    return current_keyring().unseal(token, place=place)


# --- the columns that hold sealed values ---

ColumnKind = Literal["text", "json_values"]


@dataclass(frozen=True)
class SealedColumn:
    """A column of sealed values: ``text`` (one value) or ``json_values`` (an object's values)."""

    table: str
    column: str
    kind: ColumnKind = "text"
    primary_key: str = "id"

    def place(self, row_id: int | None) -> Place:
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


def registered_columns() -> list[SealedColumn]:
    """Return the registered columns, by table and column name."""
    return [_registry[k] for k in sorted(_registry)]


def _sealed_form(spec: SealedColumn, value: Any, row_id: int | None, ring: Keyring) -> Any:
    """Return a value given in clear (text, or an object of texts) sealed for its row."""
    place = spec.place(row_id)
    if spec.kind == "json_values":
        return {
            name: ring.seal(v, place=place.item(name)) if isinstance(v, str) else v
            for name, v in value.items()
        }
    return ring.seal(value, place=place)


def _opened_form(spec: SealedColumn, value: Any, row_id: int | None, ring: Keyring) -> Any:
    place = spec.place(row_id)
    if spec.kind == "json_values":
        return {
            name: ring.unseal(v, place=place.item(name)) if isinstance(v, str) else v
            for name, v in (value or {}).items()
        }
    return None if value is None else ring.unseal(value, place=place)


# --- sealing what the ORM writes: every value set in clear is sealed when it is flushed ---

_models: dict[type, list[SealedColumn]] = {}
_PENDING = "relevo_secrets_to_seal"


def seal_on_flush(model: type, *columns: str) -> None:
    """Have the ORM seal these registered columns of ``model`` whenever they are written.

    Whatever code sets on these attributes is plaintext (a value that looks sealed included:
    it is sealed again, never stored as it is); it is sealed for its row at flush time, so
    a new row's values are sealed once the row has its id.
    """
    table_name = model.__tablename__  # type: ignore[attr-defined]
    _models[model] = [_registry[(table_name, column)] for column in columns]


def opened(obj: Any, column: str) -> Any:
    """Return an ORM object's stored secret in clear: text or None, or an object of texts.

    Raises :class:`SecretUnreadable` when no configured key opens it at the object's row.
    """
    (spec,) = [s for s in _models[type(obj)] if s.column == column]
    row_id = getattr(obj, spec.primary_key)
    return _opened_form(spec, getattr(obj, column), row_id, current_keyring())


def _empty(spec: SealedColumn) -> Any:
    return {} if spec.kind == "json_values" else None


@event.listens_for(Session, "before_flush")
def _seal_before_flush(session: Session, _context: UOWTransaction, _instances: Any) -> None:
    """Seal the secrets set since the last flush; a new row's wait for its id (below)."""
    waiting: list[Any] = []
    for obj in (*session.new, *session.dirty):
        specs = _models.get(type(obj))
        if not specs:
            continue
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
                setattr(
                    obj, spec.column, _sealed_form(spec, attribute.value, row_id, current_keyring())
                )
        if unsealed:
            state.info[_PENDING] = unsealed
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
            column: _sealed_form(specs[column], value, row_id, current_keyring())
            for column, value in unsealed.items()
        }
        mapped_table = inspect(type(obj)).local_table
        pk = mapped_table.c[specs[next(iter(unsealed))].primary_key]
        session.connection().execute(update(mapped_table).where(pk == row_id).values(sealed))
        for column, value in sealed.items():
            set_committed_value(obj, column, value)


# --- rotation, checks and the keys a process starts with ---


@dataclass
class ResealReport:
    """What a re-seal did: rows changed, and the values no key opens (table.column of row)."""

    resealed: int = 0
    unreadable: list[str] = field(default_factory=list)
    dropped: int = 0


def _column_table(spec: SealedColumn) -> Any:
    value_type = _JSON if spec.kind == "json_values" else Text()
    return table(spec.table, Column(spec.primary_key, Integer), Column(spec.column, value_type))


def _stored(connection: Connection, spec: SealedColumn) -> Iterator[tuple[int, Any]]:
    tbl = _column_table(spec)
    pk, col = tbl.c[spec.primary_key], tbl.c[spec.column]
    yield from connection.execute(select(pk, col).where(col.is_not(None)).order_by(pk)).all()


def _existing(connection: Connection, specs: Sequence[SealedColumn]) -> list[SealedColumn]:
    """Return the columns the database has (one not yet migrated may lack some)."""
    inspector = inspect(connection)
    tables = set(inspector.get_table_names())
    columns = {
        name: {c["name"] for c in inspector.get_columns(name)}
        for name in {spec.table for spec in specs} & tables
    }
    return [spec for spec in specs if spec.column in columns.get(spec.table, ())]


def reseal_column(
    connection: Connection,
    spec: SealedColumn,
    *,
    keyring: Keyring | None = None,
    report: ResealReport | None = None,
    mode: Literal["reseal", "seal_plaintext", "unseal", "legacy"] = "reseal",
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
    ring = keyring or current_keyring()
    report = report if report is not None else ResealReport()
    tbl = _column_table(spec)
    pk = tbl.c[spec.primary_key]

    def convert(value: str, place: Place) -> str:
        if mode == "unseal":
            return ring.unseal(value, place=place)
        if mode == "legacy":
            return ring.seal_legacy(ring.unseal(value, place=place))
        if mode == "seal_plaintext":
            return value if is_sealed(value) else ring.seal(value, place=place)
        return ring.reseal(value, place=place)

    for row_id, value in _stored(connection, spec):
        place = spec.place(row_id)
        new: Any
        lost = False
        if spec.kind == "json_values":
            if not isinstance(value, dict) or not value:
                continue
            new = {}
            for name, v in value.items():
                if not isinstance(v, str):
                    new[name] = v
                    continue
                try:
                    new[name] = convert(v, place.item(name))
                except SecretUnreadable:
                    lost = True
                    if not drop_unreadable:
                        new[name] = v
        else:
            try:
                new = convert(value, place)
            except SecretUnreadable:
                lost, new = True, None if drop_unreadable else value
        if lost:
            report.unreadable.append(str(place))
            if not drop_unreadable:
                continue
            report.dropped += 1
        if new != value:
            if write:
                connection.execute(update(tbl).where(pk == row_id).values({spec.column: new}))
            report.resealed += 0 if lost else 1
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
    for spec in _existing(connection, registered_columns()):
        reseal_column(
            connection,
            spec,
            keyring=keyring,
            report=report,
            write=write,
            drop_unreadable=drop_unreadable,
        )
    return report


def unreadable_secrets(connection: Connection, keyring: Keyring) -> list[str]:
    """Return where the stored secrets are that no key of ``keyring`` opens (changes nothing)."""
    unreadable: list[str] = []
    for spec in _existing(connection, registered_columns()):
        for row_id, value in _stored(connection, spec):
            try:
                _opened_form(spec, value, row_id, keyring)
            except SecretUnreadable:
                unreadable.append(str(spec.place(row_id)))
            except AttributeError:  # not a JSON object: nothing sealed in it
                continue
    return unreadable


def _sealed_count(connection: Connection) -> int:
    count = 0
    for spec in _existing(connection, registered_columns()):
        for _row_id, value in _stored(connection, spec):
            values = value.values() if isinstance(value, dict) else [value]
            count += sum(1 for v in values if isinstance(v, str) and is_sealed(v))
    return count


_RECOVERY = (
    "Restore the data directory's {key_file} file from a backup (or the process's "
    f"{ENV_VAR} setting), or set {ENV_VAR} to the keys they were sealed with (the newest "
    "first). If those keys are lost for good, `relevo secrets rotate --drop-unreadable` "
    "removes the values no key opens (enter them again afterwards)."
)


def keyring_for_database(
    connection: Connection, *, keys: Sequence[str], data_dir: Path
) -> Keyring | None:
    """Return the configured keys, else the key file's, else None when the database holds no
    sealed value (raises SecretsLocked: a new key would not open the ones it holds)."""
    ring = Keyring.configured(keys=keys, data_dir=data_dir)
    if ring is not None:
        return ring
    held = _sealed_count(connection)
    if held:
        path = data_dir / KEY_FILE
        raise SecretsLocked(
            f"the database holds {held} sealed secrets but there is no encryption key: {path} "
            f"is missing and {ENV_VAR} is not set. Relevo does not make a new key, which "
            "could not open them. " + _RECOVERY.format(key_file=KEY_FILE)
        )
    return None


def check_keys(engine: Engine, *, keys: Sequence[str], data_dir: Path) -> None:
    """Raise SecretsLocked (saying how to recover) when the stored secrets would not open
    with the keys a process would start with; change nothing (no key is made)."""
    with engine.connect() as connection:
        ring = keyring_for_database(connection, keys=keys, data_dir=data_dir)
        unreadable = [] if ring is None else unreadable_secrets(connection, ring)
        connection.rollback()
    if unreadable:
        shown = ", ".join(unreadable[:5]) + (" and more" if len(unreadable) > 5 else "")
        raise SecretsLocked(
            f"{len(unreadable)} stored secrets open with none of the configured encryption "
            f"keys ({shown}). Relevo does not start, so that nothing new is sealed with a "
            "key that is not theirs. " + _RECOVERY.format(key_file=KEY_FILE)
        )


def prepare_keyring(engine: Engine, *, keys: Sequence[str], data_dir: Path) -> Keyring:
    """Return the key ring a process starts with, having checked it opens every stored secret
    (raises SecretsLocked); a key is generated only for a database with no sealed value."""
    check_keys(engine, keys=keys, data_dir=data_dir)
    return Keyring.load(keys=keys, data_dir=data_dir)
