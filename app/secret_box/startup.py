"""The keys a process starts with, checked against the secrets the database holds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Connection, Engine

from app.secret_box.columns import (
    existing_columns,
    opened_form,
    registered_columns,
    stored_values,
)
from app.secret_box.keys import ENV_VAR, KEY_FILE, Keyring, SecretsLocked, SecretUnreadable
from app.secret_box.place import is_sealed

__all__ = ["check_keys", "keyring_for_database", "prepare_keyring", "unreadable_secrets"]

_RECOVERY = (
    "Restore the data directory's {key_file} file from a backup (or the process's "
    f"{ENV_VAR} setting), or set {ENV_VAR} to the keys they were sealed with (the newest "
    "first). If those keys are lost for good, `relevo secrets rotate --drop-unreadable` "
    "removes the values no key opens (enter them again afterwards)."
)


def unreadable_secrets(connection: Connection, keyring: Keyring) -> list[str]:
    """Return where the stored secrets are that no key of ``keyring`` opens (changes nothing)."""
    unreadable: list[str] = []
    for spec in existing_columns(connection, registered_columns()):
        for row_id, value in stored_values(connection, spec):
            try:
                opened_form(spec, value, row_id, keyring)
            except SecretUnreadable:
                unreadable.append(str(spec.place(row_id)))
            except AttributeError:  # not a JSON object: nothing sealed in it
                continue
    return unreadable


def _sealed_count(connection: Connection) -> int:
    count = 0
    for spec in existing_columns(connection, registered_columns()):
        for _row_id, value in stored_values(connection, spec):
            values = value.values() if isinstance(value, dict) else [value]
            count += sum(1 for v in values if isinstance(v, str) and is_sealed(v))
    return count


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
