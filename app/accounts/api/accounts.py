"""Health, the caller's account and API keys."""

from __future__ import annotations

from fastapi import APIRouter

from app.accounts import service as users
from app.accounts.deps import CurrentUser, KeyManager
from app.accounts.schemas import ApiKeyCreate, ApiKeyCreated, ApiKeyRead, Me
from app.web_common.deps import SessionDep

router = APIRouter(tags=["account"])


@router.get("/health")
def health() -> dict[str, str]:
    """Answer that the server is up."""
    return {"status": "ok"}


@router.get("/me", response_model=Me)
def me(user: CurrentUser) -> Me:
    """Return the caller's account."""
    return Me.model_validate(user)


@router.get("/api-keys", response_model=list[ApiKeyRead])
def list_keys(user: CurrentUser, session: SessionDep) -> list[ApiKeyRead]:
    """Return the caller's live API keys (prefixes only)."""
    return [ApiKeyRead.model_validate(k) for k in users.list_api_keys(session=session, user=user)]


@router.post("/api-keys", response_model=ApiKeyCreated, status_code=201)
def create_key(body: ApiKeyCreate, user: KeyManager, session: SessionDep) -> ApiKeyCreated:
    """Create an API key; the key is in this answer and nowhere else, ever."""
    api_key, key = users.create_api_key(
        session=session,
        user=user,
        name=body.name,
        expires_at=body.expires_at,
        can_manage_keys=body.can_manage_keys,
    )
    return ApiKeyCreated(**ApiKeyRead.model_validate(api_key).model_dump(), key=key)


@router.delete("/api-keys/{key_id}", status_code=204)
def revoke_key(key_id: int, user: KeyManager, session: SessionDep) -> None:
    """Revoke one of the caller's keys."""
    users.revoke_api_key(session=session, user=user, key_id=key_id)
