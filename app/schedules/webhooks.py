"""Webhooks: where alerts go. Owned by a user, usable by the teams it names; the secret is
sealed at rest (app.secret_box) and never returned."""

from __future__ import annotations

import hashlib
import hmac

import httpx
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.access import SHARE_TABLES, can_see, valid_id
from app.credentials import origin, split_credentials
from app.errors import Forbidden, Invalid, NotFound
from app.models import Case, TeamMember, User, Webhook
from app.outbound.destinations import url_problem
from app.schedules.schemas import WebhookCreate, WebhookRead, WebhookUpdate
from app.secret_box import opened
from app.teams import service as teams

__all__ = [
    "create_webhook",
    "delete_webhook",
    "delivery_url",
    "list_webhooks",
    "may_receive",
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


def delivery_url(webhook: Webhook) -> str:
    """Return the URL to POST to, with its credentials (kept sealed apart) put back."""
    credentials: str | None = opened(webhook, "basic_auth")
    if credentials is None:
        return webhook.url
    user, _, password = credentials.partition(":")
    return str(httpx.URL(webhook.url).copy_with(username=user, password=password))


def secret_of(webhook: Webhook) -> str | None:
    """Return the webhook's secret in clear, just before signing."""
    secret: str | None = opened(webhook, "secret")
    return secret


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


def may_receive(*, session: Session, webhook: Webhook, case: Case) -> bool:
    """Return whether the case's alerts may go to the webhook: its owner may see the case, or
    the case is shared with one of the teams the webhook names."""
    # Whoever may change the URL reads what is sent there: the owner (members of its teams
    # could too before that was the owner's alone). A member's own case alerts a team's
    # webhook once the case is shared with that team.
    owner = session.get(User, webhook.owner_id)
    if owner is not None and can_see(session=session, user=owner, obj=case):
        return True
    team_ids = [int(t) for t in webhook.team_ids or []]
    if not team_ids:
        return False
    table, column = SHARE_TABLES[Case]
    shared = exists().where(table.c[column] == case.id, table.c.team_id.in_(team_ids))
    return bool(session.scalar(select(shared)))


def usable_webhook_ids(*, session: Session, user: User, case: Case, ids: list[int]) -> list[int]:
    """Return the ids, checked: each must be a webhook the user may use that may receive the
    case's alerts (else 422)."""
    for webhook_id in ids:
        try:
            webhook = visible_webhook(session=session, user=user, webhook_id=webhook_id)
        except NotFound:
            raise Invalid("webhook_ids", f"No webhook with id {webhook_id}.") from None
        if not may_receive(session=session, webhook=webhook, case=case):
            raise Invalid(
                "webhook_ids",
                f"Webhook {webhook_id} may not receive case {case.id}'s alerts: neither its "
                "owner nor its teams may see the case (share the case with one of its teams).",
            )
    return sorted(set(ids))


def refusal(url: str) -> str | None:
    """Return why the URL may not be called (bad URL or the outbound policy), or None.

    What cannot be told without DNS is told at delivery, which logs a refusal.
    """
    return url_problem(url)


def _check_url(url: str) -> tuple[str, str | None]:
    """Return the URL, checked, without its ``user:password@``, and those credentials."""
    reason = refusal(url.strip())
    if reason is not None:
        raise Invalid("url", reason)
    try:
        return split_credentials(url.strip())
    except httpx.InvalidURL as exc:
        raise Invalid("url", "That is not a valid URL.") from exc


def _team_ids(session: Session, user: User, wanted: list[int]) -> list[int]:
    return [t.id for t in teams.teams_for_sharing(session=session, user=user, team_ids=wanted)]


def create_webhook(*, session: Session, user: User, body: WebhookCreate) -> Webhook:
    """Create a webhook; its URL must pass the outbound policy (else 422)."""
    url, credentials = _check_url(body.url)
    webhook = Webhook(
        owner_id=user.id,
        name=body.name,
        url=url,
        basic_auth=credentials,  # sealed for this row when flushed
        secret=body.secret or None,  # sealed for this row when flushed
        team_ids=_team_ids(session, user, body.team_ids or []),
    )
    session.add(webhook)
    session.flush()
    return webhook


def update_webhook(
    *, session: Session, user: User, webhook: Webhook, body: WebhookUpdate
) -> Webhook:
    """Rename, re-point, re-key or re-share a webhook ("secret": "" removes the secret).

    Pointing it at another origin (scheme, host or port) drops its secret and credentials
    unless new ones come in the same request: they never follow a URL elsewhere.
    """
    if (body.url is not None or body.secret is not None) and webhook.owner_id != user.id:
        # Where alerts go, and how they are signed, decide who reads the alerts of every case
        # using the webhook: a team member re-pointing it would read the owner's own cases.
        raise Forbidden("Only the owner of this webhook may change its URL or secret.")
    if body.name is not None:
        webhook.name = body.name
    if body.url is not None:
        url, credentials = _check_url(body.url)
        if origin(url) != origin(webhook.url):
            webhook.secret = webhook.basic_auth = None
        if credentials is not None:
            webhook.basic_auth = credentials
        webhook.url = url
    if body.secret is not None:
        webhook.secret = body.secret or None
    if body.team_ids is not None:
        if webhook.owner_id != user.id:
            raise Forbidden("Only the owner of this webhook may change who it is shared with.")
        webhook.team_ids = _team_ids(session, user, body.team_ids)
    session.flush()
    return webhook


def delete_webhook(*, session: Session, user: User, webhook: Webhook) -> None:
    """Delete a webhook (its owner only)."""
    if webhook.owner_id != user.id:
        raise Forbidden("Only the owner of this webhook may delete it.")
    session.delete(webhook)
    session.flush()


def to_read(webhook: Webhook) -> WebhookRead:
    """Return the API view of a webhook (never its secret)."""
    return WebhookRead(
        id=webhook.id,
        name=webhook.name,
        url=webhook.url,
        has_secret=webhook.secret is not None,
        has_basic_auth=webhook.basic_auth is not None,
        team_ids=[int(t) for t in webhook.team_ids],
        created_at=webhook.created_at,
    )
