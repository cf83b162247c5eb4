"""Health, the caller's account and API keys."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, HTTPException, Request

from app.accounts import scopes as key_scopes
from app.accounts import service as users
from app.accounts.deps import CurrentUser, KeyManager
from app.accounts.schemas import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyRead,
    ApiKeyUpdate,
    CurrentUserRead,
)
from app.web_common.deps import SessionDep

router = APIRouter(tags=["account"])


@router.get("/health")
def health() -> dict[str, str]:
    """Answer that the server is up."""
    return {"status": "ok"}


@router.get("/me", response_model=CurrentUserRead)
def me(user: CurrentUser) -> CurrentUserRead:
    """Return the caller's account."""
    return CurrentUserRead.model_validate(user)


@router.get("/api-keys", response_model=list[ApiKeyRead])
def list_keys(user: CurrentUser, session: SessionDep) -> list[ApiKeyRead]:
    """Return the caller's live API keys (prefixes only)."""
    return [ApiKeyRead.model_validate(k) for k in users.list_api_keys(session=session, user=user)]


@router.post("/api-keys", response_model=ApiKeyCreated, status_code=201)
def create_key(
    request: Request, body: ApiKeyCreate, user: KeyManager, session: SessionDep
) -> ApiKeyCreated:
    """Create an API key; the key is in this answer and nowhere else, ever."""
    _within_caller(request, body.scopes)
    api_key, key = users.create_api_key(
        session=session,
        user=user,
        name=body.name,
        expires_at=body.expires_at,
        can_manage_keys=body.can_manage_keys,
        scopes=body.scopes,
    )
    return ApiKeyCreated(**ApiKeyRead.model_validate(api_key).model_dump(), key=key)


@router.patch("/api-keys/{key_id}", response_model=ApiKeyRead)
def update_key(
    request: Request, key_id: int, body: ApiKeyUpdate, user: KeyManager, session: SessionDep
) -> ApiKeyRead:
    """Set what one of the caller's keys may do (its scopes)."""
    _within_caller(request, body.scopes)
    api_key = users.set_scopes(session=session, user=user, key_id=key_id, scopes=body.scopes)
    return ApiKeyRead.model_validate(api_key)


@router.delete("/api-keys/{key_id}", status_code=204)
def revoke_key(key_id: int, user: KeyManager, session: SessionDep) -> None:
    """Revoke one of the caller's keys."""
    users.revoke_api_key(session=session, user=user, key_id=key_id)


def _within_caller(request: Request, asked: Sequence[str] | None) -> None:
    """A key that manages keys gives no key a right it lacks itself (403)."""
    api_key = getattr(request.state, "api_key", None)
    if api_key is None:  # a browser session has every right
        return
    own = key_scopes.split_scopes(api_key.scopes)
    beyond = [s for s in (asked or key_scopes.SCOPES) if s not in own]
    if beyond:
        raise HTTPException(
            403,
            key_scopes.missing_scope_message(beyond[0], api_key.scopes) + " "
            "A key cannot give another key a scope it lacks.",
        )
