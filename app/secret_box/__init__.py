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

The package, by concern: :mod:`.place` (the form of a stored secret and the place it is
bound to), :mod:`.keys` (the key ring and where its keys come from), :mod:`.installed` (the
process's key ring; :func:`seal` and :func:`unseal`), :mod:`.columns` (the registered
columns), :mod:`.orm` (sealing what the ORM flushes), :mod:`.reseal` (re-sealing stored
columns) and :mod:`.startup` (the keys a process starts with, checked).
"""

from __future__ import annotations

from app.secret_box.columns import SealedColumn, register_sealed_column, registered_columns
from app.secret_box.installed import current_keyring, install_keyring, seal, unseal
from app.secret_box.keys import (
    ENV_VAR,
    KEY_FILE,
    KeyConfigError,
    Keyring,
    SecretsLocked,
    SecretUnreadable,
)
from app.secret_box.orm import opened, seal_on_flush
from app.secret_box.place import PREFIX, PREFIX_V1, Place, is_sealed
from app.secret_box.reseal import ResealReport, reseal_all, reseal_column
from app.secret_box.startup import (
    check_keys,
    keyring_for_database,
    prepare_keyring,
    unreadable_secrets,
)

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
