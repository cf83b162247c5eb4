"""The process's key ring (installed when it starts), and sealing or opening with it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from app.secret_box.keys import ENV_VAR, Keyring
from app.secret_box.place import Place

__all__ = ["current_keyring", "install_keyring", "ring", "seal", "unseal"]

_lock = threading.Lock()
# The installed key ring (None: the environment's, loaded on first use). Read it through
# current_keyring(); it is public so that a test can put back the one it found.
ring: Keyring | None = None


def install_keyring(keyring: Keyring | None) -> Keyring | None:
    """Make ``keyring`` the process's key ring; return the previous one (None: from env)."""
    global ring
    with _lock:
        previous, ring = ring, keyring
    return previous


def current_keyring() -> Keyring:
    """Return the installed key ring, or the one the environment describes."""
    global ring
    with _lock:
        if ring is None:
            env = os.environ
            ring = Keyring.load(
                keys=env.get(ENV_VAR, "").split(","),
                data_dir=Path(env.get("RELEVO_DATA_DIR", ".relevo")),
            )
        return ring


def seal(plaintext: str, *, place: Place) -> str:
    """Return ``plaintext`` sealed with the newest key for ``place``, whatever it looks like."""
    return current_keyring().seal(plaintext, place=place)


def unseal(token: str, *, place: Place) -> str:
    """Return the plaintext of the value stored at ``place`` (a legacy plaintext as it is).

    Raises :class:`SecretUnreadable` when no configured key opens it there.
    """
    return current_keyring().unseal(token, place=place)
