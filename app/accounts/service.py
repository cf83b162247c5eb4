"""Accounts and API keys."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.accounts import sessions
from app.accounts.scopes import parse_scopes
from app.errors import Conflict, Invalid, NotFound
from app.models import ApiKey, User
from app.security import hash_api_key, hash_password, new_api_key, verify_password

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")
MIN_PASSWORD = 12
MAX_PASSWORD = 1024
MAX_KEY_NAME = 200


@cache
def _dummy_hash() -> str:
    # Verified against when the email is unknown, so both cases cost one argon2 check. Made
    # on first use: an argon2 hash takes a good part of a second, which every `relevo`
    # command would otherwise pay when it starts.
    return hash_password("relevo dummy password, never valid")


def create_user(*, session: Session, email: str, password: str, is_admin: bool = False) -> User:
    """Create and return a user; the email must be new and the password long enough."""
    email = email.strip().lower()
    if not EMAIL_RE.match(email):
        raise Invalid("email", "That is not an email address.")
    check_password(password)
    if get_by_email(session=session, email=email) is not None:
        raise Conflict(f"A user with the email {email} exists already.")
    user = User(email=email, password_hash=hash_password(password), is_admin=is_admin)
    session.add(user)
    session.flush()
    return user


def check_password(password: str) -> None:
    """Raise Invalid unless the password is long enough and not only spaces."""
    if len(password) < MIN_PASSWORD:
        raise Invalid("password", f"A password needs at least {MIN_PASSWORD} characters.")
    if len(password) > MAX_PASSWORD:
        raise Invalid("password", f"A password has at most {MAX_PASSWORD} characters.")
    if not password.strip() or len(set(password)) < 4:
        raise Invalid("password", "A password needs more than a few different characters.")
    if "\x00" in password:
        raise Invalid("password", "A password cannot contain a NUL character.")


def change_password(*, session: Session, user: User, current: str, new: str) -> None:
    """Set a new password after checking the current one; every browser session ends."""
    if not verify_password(user.password_hash, current):
        raise Invalid("current_password", "The current password is wrong.")
    check_password(new)
    user.password_hash = hash_password(new)
    sessions.revoke_all(session=session, user_id=user.id)
    session.flush()


def get_by_email(*, session: Session, email: str) -> User | None:
    """Return the user with that email, if any."""
    return session.scalar(select(User).where(User.email == email.strip().lower()))


def authenticate(*, session: Session, email: str, password: str) -> User | None:
    """Return the user when the email and password match, else None."""
    if "\x00" in email or len(email) > 320 or len(password) > MAX_PASSWORD:
        verify_password(_dummy_hash(), password[:MAX_PASSWORD])
        return None
    user = get_by_email(session=session, email=email)
    if user is None:
        verify_password(_dummy_hash(), password)
        return None
    if not verify_password(user.password_hash, password) or user.is_disabled:
        return None
    return user


def create_api_key(
    *,
    session: Session,
    user: User,
    name: str = "",
    expires_at: datetime | None = None,
    can_manage_keys: bool = False,
    scopes: Sequence[str] | None = None,
) -> tuple[ApiKey, str]:
    """Create an API key for the user; return it with the clear key, which is never kept.

    ``scopes`` (read, run, write, judge) default to every one, the rights keys always had.
    """
    stored_scopes = parse_scopes(scopes)
    key = new_api_key()
    name = " ".join(name.split())
    if len(name) > MAX_KEY_NAME:
        raise Invalid(
            "name", f"A key's name has at most {MAX_KEY_NAME} characters, not {len(name)}."
        )
    if expires_at is not None:
        # Stored in UTC: SQLite keeps a datetime without its offset, so 12:30+02:00 stored
        # as given read back as 12:30 UTC, two hours late.
        expires_at = (
            expires_at.replace(tzinfo=UTC)
            if expires_at.tzinfo is None
            else expires_at.astimezone(UTC)
        )
    if expires_at is not None and expires_at <= datetime.now(UTC):
        raise Invalid("expires_at", "The expiry must be in the future.")
    api_key = ApiKey(
        user_id=user.id,
        # A key is told apart by its name in every list: one given none is named by its prefix.
        name=name or f"Key {key[:12]}",
        prefix=key[:12],
        key_hash=hash_api_key(key),
        expires_at=expires_at,
        can_manage_keys=can_manage_keys,
        scopes=stored_scopes,
    )
    session.add(api_key)
    session.flush()
    return api_key, key


def list_api_keys(*, session: Session, user: User) -> list[ApiKey]:
    """Return the user's keys that are not revoked, newest first."""
    stmt = (
        select(ApiKey)
        .where(ApiKey.user_id == user.id, ApiKey.revoked_at.is_(None))
        .order_by(ApiKey.id.desc())
    )
    return list(session.scalars(stmt))


def get_api_key(*, session: Session, user: User, key_id: int) -> ApiKey:
    """Return one of the user's live keys; another user's (or a revoked) key is not found."""
    api_key = session.get(ApiKey, key_id) if valid_id(key_id) else None
    if api_key is None or api_key.user_id != user.id or api_key.revoked_at is not None:
        raise NotFound("No such API key.")
    return api_key


def set_scopes(*, session: Session, user: User, key_id: int, scopes: Sequence[str]) -> ApiKey:
    """Set what one of the user's keys may do (at least one scope)."""
    api_key = get_api_key(session=session, user=user, key_id=key_id)
    api_key.scopes = parse_scopes(scopes)
    session.flush()
    return api_key


def revoke_api_key(*, session: Session, user: User, key_id: int) -> None:
    """Revoke one of the user's keys; another user's key is not found."""
    api_key = session.get(ApiKey, key_id) if valid_id(key_id) else None
    if api_key is None or api_key.user_id != user.id or api_key.revoked_at is not None:
        raise NotFound("No such API key.")
    api_key.revoked_at = datetime.now(UTC)
    session.flush()


def api_key_for(*, session: Session, key: str) -> ApiKey | None:
    """Return a live API key (not revoked, not expired), recording its use; else None."""
    api_key = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_api_key(key)))
    if api_key is None or api_key.revoked_at is not None:
        return None
    now = datetime.now(UTC)
    expires = api_key.expires_at
    if expires is not None and (expires if expires.tzinfo else expires.replace(tzinfo=UTC)) <= now:
        return None
    used = api_key.last_used_at
    if (
        used is None
        or now - (used if used.tzinfo else used.replace(tzinfo=UTC)) > sessions.SEEN_EVERY
    ):
        api_key.last_used_at = now
        session.flush()
    return api_key


def user_for_api_key(*, session: Session, key: str) -> User | None:
    """Return the owner of a live API key, or None for an unknown, revoked or expired key."""
    api_key = api_key_for(session=session, key=key)
    user = None if api_key is None else session.get(User, api_key.user_id)
    return None if user is None or user.is_disabled else user
