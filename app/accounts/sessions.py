"""Server-side browser sessions: the signed cookie holds a token that the database can revoke."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.models import User, UserSession
from app.security import hash_api_key

__all__ = ["SEEN_EVERY", "revoke", "revoke_all", "start", "user_for_token"]

# Recording every request would write on every page view; a minute is precise enough.
SEEN_EVERY = timedelta(minutes=1)


def start(*, session: Session, user: User) -> str:
    """Open a session for the user; return its token, which only the cookie keeps."""
    token = secrets.token_urlsafe(32)
    session.add(UserSession(user_id=user.id, token_hash=hash_api_key(token)))
    session.flush()
    return token


def user_for_token(*, session: Session, token: str, idle_timeout_s: int) -> User | None:
    """Return the user of a live session, or None when it is unknown, revoked or idle too long."""
    # One statement for the session and its user.
    found = session.execute(
        select(UserSession, User)
        .outerjoin(User, User.id == UserSession.user_id)
        .where(UserSession.token_hash == hash_api_key(token))
    ).first()
    if found is None:
        return None
    row, user = found
    if row.revoked_at is not None:
        return None
    now = datetime.now(UTC)
    last_seen = _aware(row.last_seen_at)
    if now - last_seen > timedelta(seconds=idle_timeout_s):
        row.revoked_at = now
        session.flush()
        return None
    if now - last_seen > SEEN_EVERY:
        row.last_seen_at = now
        session.flush()
    return None if user is None or user.is_disabled else user


def revoke(*, session: Session, token: str) -> None:
    """End the session with this token (logout)."""
    session.execute(
        update(UserSession)
        .where(UserSession.token_hash == hash_api_key(token), UserSession.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    session.flush()


def revoke_all(*, session: Session, user_id: int) -> int:
    """End every live session of a user (password change, admin action); return how many."""
    result = session.execute(
        update(UserSession)
        .where(UserSession.user_id == user_id, UserSession.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    return int(getattr(result, "rowcount", 0) or 0)


def _aware(moment: datetime) -> datetime:
    # SQLite gives naive datetimes back; they were stored in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
