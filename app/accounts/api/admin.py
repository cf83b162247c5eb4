"""Administrators: list, create, disable and reset accounts (JSON twin of /admin/users)."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts import admin
from app.accounts import service as users
from app.accounts.admin_schemas import UserCreate, UserRead, UserUpdate
from app.accounts.deps import CurrentUser, ManagedUserDep
from app.web_common.deps import SessionDep

router = APIRouter(prefix="/admin", tags=["admin"])


@router.get("/users", response_model=list[UserRead])
def list_users(user: CurrentUser, session: SessionDep) -> list[UserRead]:
    """Return every account (administrators only)."""
    admin.require_admin(user)
    return [UserRead.model_validate(u) for u in admin.list_users(session=session)]


@router.post("/users", response_model=UserRead, status_code=201)
def create_user(body: UserCreate, user: CurrentUser, session: SessionDep) -> UserRead:
    """Create an account (administrators only)."""
    admin.require_admin(user)
    created = users.create_user(
        session=session, email=body.email, password=body.password, is_admin=body.is_admin
    )
    return UserRead.model_validate(created)


@router.patch("/users/{user_id}", response_model=UserRead)
def update_user(
    target: ManagedUserDep, body: UserUpdate, user: CurrentUser, session: SessionDep
) -> UserRead:
    """Disable or enable an account, or reset its password (administrators only)."""
    if body.password is not None:
        admin.reset_password(session=session, user=target, password=body.password)
    if body.is_disabled is not None:
        admin.set_disabled(session=session, admin=user, user=target, disabled=body.is_disabled)
    return UserRead.model_validate(target)
