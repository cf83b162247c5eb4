"""Delivering triggered alerts: signed JSON POSTs to webhooks and e-mail over SMTP.

Deliveries are rows; any process may deliver the due ones. A delivery is claimed (its next
attempt moved a lease ahead) before it is tried, so two processes never send it at once.
A failure is tried again after each wait of ``DeliveryConfig.backoff_s`` (by default 5, 30
and 60 seconds: four attempts, the last 95 s after the first), then given up as failed. A
URL the outbound policy refuses is logged as refused without connecting, and so is a
webhook that may not receive the case's alerts (``webhooks.may_receive``). Each delivery
fails alone: an address or case name that would inject mail headers, a secret no key
opens, a receiver that breaks the connection or anything unforeseen is that delivery's
failed attempt, recorded with its error, while the others of the round go on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import smtplib
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.models import AlertEvent, Case, Delivery, Webhook
from app.outbound.errors import Unreachable
from app.outbound.policy import check_destination, current_policy
from app.outbound.retry import next_delay
from app.outbound.transport import engine_http_client
from app.schedules.alerts import email_problem
from app.schedules.webhooks import delivery_url, may_receive, secret_of, sign
from app.secret_box import SecretUnreadable

__all__ = [
    "DeliveryConfig",
    "claim_due",
    "config_from",
    "current_config",
    "deliver_due",
    "drain",
    "header_text",
    "install_config",
    "next_due_at",
]

log = logging.getLogger(__name__)
LEASE_S = 60.0
MAX_ERROR = 500
# Control characters, line and paragraph separators (each a line break to the mail
# package), and lone surrogates (which no encoding takes).
_NOT_IN_HEADERS = frozenset({"Cc", "Zl", "Zp", "Cs"})


@dataclass(frozen=True)
class DeliveryConfig:
    """Where links point, how to reach the SMTP server, and the waits between attempts."""

    base_url: str = "http://127.0.0.1:8000"
    smtp_url: str | None = None
    email_from: str = "relevo@localhost"
    backoff_s: tuple[float, ...] = (5.0, 30.0, 60.0)
    timeout_s: float = 10.0

    @property
    def email_enabled(self) -> bool:
        """Whether alerts may be e-mailed."""
        return bool(self.smtp_url)


_config = DeliveryConfig()


def install_config(config: DeliveryConfig) -> DeliveryConfig:
    """Make ``config`` the process's delivery settings; return the previous ones."""
    global _config
    previous, _config = _config, config
    return previous


def config_from(settings: Settings) -> DeliveryConfig:
    """Return the delivery settings a process's Settings describe."""
    return DeliveryConfig(
        base_url=settings.base_url or settings.listen_url or DeliveryConfig.base_url,
        smtp_url=settings.smtp_url,
        email_from=settings.alert_email_from,
    )


def current_config() -> DeliveryConfig:
    """Return the process's delivery settings."""
    return _config


def _now() -> datetime:
    return datetime.now(UTC)


def claim_due(*, session: Session, now: datetime, limit: int = 50) -> list[int]:
    """Claim the pending deliveries due at ``now`` for this process; return their ids."""
    due = or_(Delivery.next_attempt_at.is_(None), Delivery.next_attempt_at <= now)
    ids = list(
        session.scalars(
            select(Delivery.id)
            .where(Delivery.status == "pending", due)
            .order_by(Delivery.id)
            .limit(limit)
        )
    )
    claimed = []
    for delivery_id in ids:
        result = session.execute(
            update(Delivery)
            .where(Delivery.id == delivery_id, Delivery.status == "pending", due)
            .values(next_attempt_at=now + timedelta(seconds=LEASE_S))
            .execution_options(synchronize_session=False)
        )
        if getattr(result, "rowcount", 0) == 1:
            claimed.append(delivery_id)
    session.commit()
    return claimed


def next_due_at(*, session: Session, event_ids: list[int] | None = None) -> datetime | None:
    """Return when the earliest pending delivery (of these events) is due, or None."""
    stmt = select(Delivery.next_attempt_at).where(Delivery.status == "pending")
    if event_ids is not None:
        stmt = stmt.where(Delivery.event_id.in_(event_ids))
    values = list(session.scalars(stmt))
    if not values:
        return None
    moments = [_now() if v is None else (v if v.tzinfo else v.replace(tzinfo=UTC)) for v in values]
    return min(moments)


@dataclass(frozen=True)
class _Job:
    delivery_id: int
    payload: dict[str, Any]
    url: str | None
    secret: str | None
    email: str | None


@dataclass(frozen=True)
class _Outcome:
    status: str  # delivered, retry, refused
    code: int | None = None
    error: str | None = None


def _load(session: Session, delivery_id: int) -> _Job | _Outcome | None:
    """Return what to send, or the outcome of a delivery that cannot be sent as it stands
    (recorded like a failed attempt), or None when there is nothing left to do."""
    delivery = session.get(Delivery, delivery_id)
    if delivery is None:
        return None
    event = session.get(AlertEvent, delivery.event_id)
    webhook = session.get(Webhook, delivery.webhook_id) if delivery.webhook_id else None
    if event is None or (delivery.email is None and webhook is None):
        delivery.status, delivery.error = "failed", "The webhook was deleted."
        session.commit()
        return None
    if delivery.email is not None:
        problem = email_problem(delivery.email)  # rows stored before addresses were checked
        if problem is not None:
            return _Outcome("retry", error=f"Not sent: {problem}")
        return _Job(delivery.id, event.payload, None, None, delivery.email)
    assert webhook is not None
    case = session.get(Case, event.case_id)
    if case is None or not may_receive(session=session, webhook=webhook, case=case):
        return _Outcome(
            "refused",
            error=f"Not sent: neither the owner of webhook {webhook.id} nor its teams may "
            f"see case {event.case_id}.",
        )
    try:
        url, secret = delivery_url(webhook), secret_of(webhook)
    except SecretUnreadable as exc:
        return _Outcome("retry", error=f"Not sent: the webhook's secrets are unreadable: {exc}")
    return _Job(delivery.id, event.payload, url, secret, None)


def _clean(text: str) -> str:
    # A message may quote hostile input (an address, a receiver's answer): PostgreSQL takes
    # no NUL in text, and a stored error must never be the reason a record fails.
    return text.replace("\x00", "")[:MAX_ERROR]


def _record(
    session: Session, delivery_id: int, outcome: _Outcome, backoff: tuple[float, ...]
) -> None:
    delivery = session.get(Delivery, delivery_id)
    if delivery is None:
        return
    now = _now()
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.code = outcome.code
    delivery.error = None if outcome.error is None else _clean(outcome.error)
    if outcome.status in ("delivered", "refused"):
        delivery.status, delivery.next_attempt_at = outcome.status, None
    elif (delay := next_delay(backoff, delivery.attempts)) is None:
        delivery.status, delivery.next_attempt_at = "failed", None
    else:
        delivery.next_attempt_at = now + timedelta(seconds=delay)
    session.commit()


async def _post(client: httpx.AsyncClient, job: _Job, config: DeliveryConfig) -> _Outcome:
    assert job.url is not None
    body = json.dumps(job.payload, separators=(",", ":"), sort_keys=True).encode()
    try:
        await check_destination(current_policy(), httpx.URL(job.url), "this webhook")
    except Unreachable as exc:
        return _Outcome("refused", error=str(exc))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Relevo-Webhook/1",
        "X-Relevo-Event": str(job.payload.get("event", "alert.triggered")),
        "X-Relevo-Signature": sign(job.secret, body),
    }
    try:
        response = await client.post(
            job.url, content=body, headers=headers, timeout=config.timeout_s
        )
    except Unreachable as exc:  # refused at connect time by app.outbound.network
        return _Outcome("refused", error=str(exc))
    except httpx.HTTPError as exc:
        return _Outcome("retry", error=f"{type(exc).__name__}: {exc}")
    if 200 <= response.status_code < 300:
        return _Outcome("delivered", code=response.status_code)
    return _Outcome("retry", code=response.status_code, error=f"HTTP {response.status_code}")


def header_text(text: str, limit: int = 200) -> str:
    """Return ``text`` as one line fit for a mail header: line breaks and other control
    characters folded into spaces (a case name must not add headers), cut at ``limit``."""
    folded = "".join(" " if unicodedata.category(c) in _NOT_IN_HEADERS else c for c in text)
    return " ".join(folded.split())[:limit]


def _send_mail(job: _Job, config: DeliveryConfig) -> _Outcome:
    assert job.email is not None and config.smtp_url is not None
    parts = urlsplit(config.smtp_url)
    message = EmailMessage()
    case = job.payload.get("case", {})
    message["Subject"] = header_text(f"Relevo alert: {case.get('name', 'a case')}")
    message["From"] = config.email_from
    message["To"] = job.email
    message.set_content(str(job.payload.get("text", "")))
    smtp_class = smtplib.SMTP_SSL if parts.scheme == "smtps" else smtplib.SMTP
    port = parts.port or (465 if parts.scheme == "smtps" else 25)
    try:
        with smtp_class(parts.hostname or "localhost", port, timeout=config.timeout_s) as smtp:
            if parts.scheme == "smtp+starttls":
                smtp.starttls()
            if parts.username:
                smtp.login(unquote(parts.username), unquote(parts.password or ""))
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        return _Outcome("retry", error=f"{type(exc).__name__}: {exc}")
    return _Outcome("delivered", code=250)


async def _attempt(
    factory: sessionmaker[Session], client: httpx.AsyncClient, delivery_id: int
) -> None:
    """Try one delivery and record how it went; whatever it meets, it fails alone."""
    config = current_config()

    def load() -> _Job | _Outcome | None:
        with session_scope(factory) as session:
            return _load(session, delivery_id)

    try:
        job = await asyncio.to_thread(load)
        if job is None:
            return
        if isinstance(job, _Outcome):
            outcome = job
        elif job.email is not None:
            outcome = await asyncio.to_thread(_send_mail, job, config)
        else:
            outcome = await _post(client, job, config)
    except Exception as exc:  # anything unforeseen is this delivery's failed attempt
        log.exception("delivery %s failed", delivery_id)
        outcome = _Outcome("retry", error=f"{type(exc).__name__}: {exc}")

    def record() -> None:
        with session_scope(factory) as session:
            _record(session, delivery_id, outcome, config.backoff_s)

    await asyncio.to_thread(record)


async def deliver_due(
    *, session_factory: sessionmaker[Session], client: httpx.AsyncClient | None = None
) -> int:
    """Try every delivery due now once (claimed first); return how many were tried."""

    def claim() -> list[int]:
        with session_scope(session_factory) as session:
            return claim_due(session=session, now=_now())

    ids = await asyncio.to_thread(claim)
    if not ids:
        return 0
    own = client is None
    http = client or engine_http_client()
    try:
        # Each delivery fails alone: one that cannot even be recorded (the database away)
        # is logged and tried again once its lease is over; the others are recorded.
        results = await asyncio.gather(
            *(_attempt(session_factory, http, i) for i in ids), return_exceptions=True
        )
    finally:
        if own:
            await http.aclose()
    for delivery_id, result in zip(ids, results, strict=True):
        if isinstance(result, BaseException):
            log.error("delivery %s could not be recorded", delivery_id, exc_info=result)
    return len(ids)


async def drain(*, session_factory: sessionmaker[Session], event_ids: list[int]) -> None:
    """Deliver these events' deliveries until none is pending, waiting out each backoff."""
    async with engine_http_client() as client:
        while True:
            await deliver_due(session_factory=session_factory, client=client)

            def due() -> datetime | None:
                with session_scope(session_factory) as session:
                    return next_due_at(session=session, event_ids=event_ids)

            when = await asyncio.to_thread(due)
            if when is None:
                return
            await asyncio.sleep(max(0.05, (when - _now()).total_seconds()))
