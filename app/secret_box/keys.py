"""The key ring that seals and opens stored secrets, and where its keys come from.

The keys are Fernet keys: the first seals, every one opens. ``sealed:v2:`` values are
AES-256-GCM, with an AES key derived from each Fernet key by HKDF; ``sealed:v1:`` values
(older versions) are Fernet tokens.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.secret_box.place import PREFIX, PREFIX_V1, Place

__all__ = [
    "ENV_VAR",
    "KEY_FILE",
    "KeyConfigError",
    "Keyring",
    "SecretUnreadable",
    "SecretsLocked",
]

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


def _aes_key(fernet_key: str) -> AESGCM:
    raw = base64.urlsafe_b64decode(fernet_key.encode("ascii"))
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(raw)
    return AESGCM(derived)


def _fernet(number: int, key: str) -> Fernet:
    try:
        return Fernet(key.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise KeyConfigError(
            f"encryption key number {number} is not a Fernet key (32 url-safe base64-encoded "
            "bytes; make one with `relevo secrets new-key`)"
        ) from None


@dataclass(frozen=True)
class Keyring:
    """The encryption keys: the first seals, every one unseals."""

    keys: tuple[str, ...]
    _fernet: MultiFernet = field(init=False, repr=False, compare=False)
    _aes: tuple[AESGCM, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise KeyConfigError("at least one encryption key is needed")
        fernets = [_fernet(n, key) for n, key in enumerate(self.keys, start=1)]
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
            return self._open_v1(token)
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

    def _open_v1(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token[len(PREFIX_V1) :].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError):
            raise _unreadable() from None

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
