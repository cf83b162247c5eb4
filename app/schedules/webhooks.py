"""Webhooks: where alerts go. Owned by a user, usable by the teams it names; the secret is
sealed at rest (app.secret_box) and never returned."""

from __future__ import annotations

import hashlib
import hmac

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.errors import Forbidden, Invalid, NotFound
from app.models import TeamMember, User, Webhook
from app.schedules.schemas import WebhookCreate, WebhookRead, WebhookUpdate
from app.search.destinations import url_problem
from app.secret_box import seal, unseal
from app.teams import service as teams

__all__ = [
    "create_webhook",
    "delete_webhook",
    "list_webhooks",
    "refusal",
    "secret_of",
    "sign",
    "to_read",
    "update_webhook",
    "usable_webhook_ids",
    "visible_webhook",
]


def sign(secret: str | None, body: bytes) -> str:
    """Return the X-Relevo-Signature value of a body: ``sha256=<hex HMAC-SHA256>``."""
    digest = hmac.new((secret or "").encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def secret_of(webhook: Webhook) -> str | None:
    """Return the webhook's secret in clear, just before signing."""
    return None if webhook.secret is None else unseal(webhook.secret)


def _my_team_ids(session: Session, user: User) -> set[int]:
    return set(session.scalars(select(TeamMember.team_id).where(TeamMember.user_id == user.id)))


def _can_see(session: Session, user: User, webhook: Webhook) -> bool:
    if user.is_disabled:
        return False
    return webhook.owner_id == user.id or bool(set(webhook.team_ids) & _my_team_ids(session, user))


def visible_webhook(*, session: Session, user: User, webhook_id: int) -> Webhook:
    """Return the webhook when the user owns it or is in a team it names, else 404."""
    found = session.get(Webhook, webhook_id) if valid_id(webhook_id) else None
    if found is None or not _can_see(session, user, found):
        raise NotFound(f"No webhook with id {webhook_id}.")
    return found


def list_webhooks(*, session: Session, user: User) -> list[Webhook]:
    """Return the webhooks the user may use, oldest first."""
    every = session.scalars(select(Webhook).order_by(Webhook.id))
    return [w for w in every if _can_see(session, user, w)]


def usable_webhook_ids(*, session: Session, user: User, ids: list[int]) -> list[int]:
    """Return the ids, checked: each must be a webhook the user may use (else 422)."""
    for webhook_id in ids:
        try:
            visible_webhook(session=session, user=user, webhook_id=webhook_id)
        except NotFound:
            raise Invalid("webhook_ids", f"No webhook with id {webhook_id}.") from None
    return sorted(set(ids))


def refusal(url: str) -> str | None:
    """Return why the URL may not be called (bad URL or the outbound policy), or None.

    What cannot be told without DNS is told at delivery, which logs a refusal.
    """
    return url_problem(url)


def _check_url(url: str) -> str:
    reason = refusal(url.strip())
    if reason is not None:
        raise Invalid("url", reason)
    return url.strip()


def _team_ids(session: Session, user: User, wanted: list[int]) -> list[int]:
    return [t.id for t in teams.teams_for_sharing(session=session, user=user, team_ids=wanted)]


def create_webhook(*, session: Session, user: User, body: WebhookCreate) -> Webhook:
    """Create a webhook; its URL must pass the outbound policy (else 422)."""
    webhook = Webhook(
        owner_id=user.id,
        name=body.name,
        url=_check_url(body.url),
        secret=seal(body.secret) if body.secret else None,
        team_ids=_team_ids(session, user, body.team_ids or []),
    )
    session.add(webhook)
    session.commit()
    return webhook


def update_webhook(
    *, session: Session, user: User, webhook: Webhook, body: WebhookUpdate
) -> Webhook:
    """Rename, re-point, re-key or re-share a webhook ("secret": "" removes the secret)."""
    if body.name is not None:
        webhook.name = body.name
    if body.url is not None:
        webhook.url = _check_url(body.url)
    if body.secret is not None:
        webhook.secret = seal(body.secret) if body.secret else None
    if body.team_ids is not None:
        if webhook.owner_id != user.id:
            raise Forbidden("Only the owner of this webhook may change who it is shared with.")
        webhook.team_ids = _team_ids(session, user, body.team_ids)
    session.commit()
    return webhook


def delete_webhook(*, session: Session, user: User, webhook: Webhook) -> None:
    """Delete a webhook (its owner only)."""
    if webhook.owner_id != user.id:
        raise Forbidden("Only the owner of this webhook may delete it.")
    session.delete(webhook)
    session.commit()


def to_read(webhook: Webhook) -> WebhookRead:
    """Return the API view of a webhook (never its secret)."""
    return WebhookRead(
        id=webhook.id,
        name=webhook.name,
        url=webhook.url,
        has_secret=webhook.secret is not None,
        team_ids=[int(t) for t in webhook.team_ids],
        created_at=webhook.created_at,
    )
