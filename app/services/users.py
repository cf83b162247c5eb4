"""Accounts and API keys."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict, Invalid, NotFound
from app.models import ApiKey, User
from app.security import hash_api_key, hash_password, new_api_key, verify_password
from app.services.access import valid_id

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")
MIN_PASSWORD = 8


def create_user(*, session: Session, email: str, password: str, is_admin: bool = False) -> User:
    """Create and return a user; the email must be new and the password long enough."""
    email = email.strip().lower()
    if not EMAIL_RE.match(email):
        raise Invalid("email", "That is not an email address.")
    if len(password) < MIN_PASSWORD:
        raise Invalid("password", f"A password needs at least {MIN_PASSWORD} characters.")
    if get_by_email(session=session, email=email) is not None:
        raise Conflict(f"A user with the email {email} exists already.")
    user = User(email=email, password_hash=hash_password(password), is_admin=is_admin)
    session.add(user)
    session.commit()
    return user


def get_by_email(*, session: Session, email: str) -> User | None:
    """Return the user with that email, if any."""
    return session.scalar(select(User).where(User.email == email.strip().lower()))


def authenticate(*, session: Session, email: str, password: str) -> User | None:
    """Return the user when the email and password match, else None."""
    user = get_by_email(session=session, email=email)
    if user is None or not verify_password(user.password_hash, password):
        return None
    return user


def create_api_key(*, session: Session, user: User, name: str = "") -> tuple[ApiKey, str]:
    """Create an API key for the user; return it with the clear key, which is never kept."""
    key = new_api_key()
    api_key = ApiKey(
        user_id=user.id, name=name.strip()[:200], prefix=key[:12], key_hash=hash_api_key(key)
    )
    session.add(api_key)
    session.commit()
    return api_key, key


def list_api_keys(*, session: Session, user: User) -> list[ApiKey]:
    """Return the user's keys that are not revoked, newest first."""
    stmt = (
        select(ApiKey)
        .where(ApiKey.user_id == user.id, ApiKey.revoked_at.is_(None))
        .order_by(ApiKey.id.desc())
    )
    return list(session.scalars(stmt))


def revoke_api_key(*, session: Session, user: User, key_id: int) -> None:
    """Revoke one of the user's keys; another user's key is not found."""
    api_key = session.get(ApiKey, key_id) if valid_id(key_id) else None
    if api_key is None or api_key.user_id != user.id or api_key.revoked_at is not None:
        raise NotFound("No such API key.")
    api_key.revoked_at = datetime.now(UTC)
    session.commit()


def user_for_api_key(*, session: Session, key: str) -> User | None:
    """Return the owner of a live API key, or None for an unknown or revoked key."""
    api_key = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_api_key(key)))
    if api_key is None or api_key.revoked_at is not None:
        return None
    return session.get(User, api_key.user_id)
