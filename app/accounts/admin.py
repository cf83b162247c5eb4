"""What an administrator (`is_admin`) may do to other accounts: list, create, disable, reset."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.accounts import service as users
from app.accounts import sessions
from app.errors import Conflict, Forbidden, NotFound
from app.models import User
from app.security import hash_password


def require_admin(user: User) -> None:
    """Raise Forbidden (403) unless the user is an administrator."""
    if not user.is_admin or user.is_disabled:
        raise Forbidden("Only administrators may manage users.")


def list_users(*, session: Session) -> list[User]:
    """Return every account, oldest first."""
    return list(session.scalars(select(User).order_by(User.id)))


def managed_user(*, session: Session, user: User, user_id: int) -> User:
    """Return the account with this id for an administrator to manage (403 for others), or 404."""
    require_admin(user)
    target = session.get(User, user_id) if valid_id(user_id) else None
    if target is None:
        raise NotFound(f"No user with id {user_id}.")
    return target


def find_user(*, session: Session, email: str) -> User:
    """Return the account with this email, or 404."""
    user = users.get_by_email(session=session, email=email)
    if user is None:
        raise NotFound(f"No user with the email {email!r}.")
    return user


def set_disabled(*, session: Session, admin: User | None, user: User, disabled: bool) -> User:
    """Disable or enable an account; a disabled user's sessions end and keys stop at once."""
    if disabled and admin is not None and admin.id == user.id:
        raise Conflict("You cannot disable your own account.")
    user.is_disabled = disabled
    if disabled:
        sessions.revoke_all(session=session, user_id=user.id)
    session.flush()
    return user


def reset_password(*, session: Session, user: User, password: str) -> User:
    """Give the account a new password; its browser sessions end (API keys keep working)."""
    users.check_password(password)
    user.password_hash = hash_password(password)
    sessions.revoke_all(session=session, user_id=user.id)
    session.flush()
    return user
