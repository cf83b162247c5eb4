"""Passwords, API keys and CSRF tokens."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

__all__ = [
    "API_KEY_PREFIX",
    "csrf_matches",
    "hash_api_key",
    "hash_password",
    "new_api_key",
    "new_csrf_token",
    "verify_password",
]

API_KEY_PREFIX = "rlv_"
_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    """Return an argon2id hash of the password."""
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Return whether the password matches the stored hash."""
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def new_api_key() -> str:
    """Return a new random API key (shown to the user once, never stored in clear)."""
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    """Return the stored form of an API key.

    Keys carry 256 random bits, so a fast hash is enough; a slow one would only slow requests.
    """
    return hashlib.sha256(key.encode()).hexdigest()


def new_csrf_token() -> str:
    """Return a fresh CSRF token for a browser session."""
    return secrets.token_urlsafe(24)


def csrf_matches(expected: str | None, given: str | None) -> bool:
    """Return whether the token sent with a form equals the session's."""
    return bool(expected) and bool(given) and hmac.compare_digest(str(expected), str(given))
