"""Alert rules on a case: create, list, change, delete, and the events they triggered."""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.db import as_utc
from app.errors import Invalid, NotFound
from app.models import Alert, AlertEvent, Case, Delivery, Run, User
from app.schedules import webhooks
from app.schedules.schemas import (
    AlertCreate,
    AlertRead,
    AlertUpdate,
    DeliveryRead,
    EventRead,
)
from app.scoring.significance import FLIPS

__all__ = [
    "KIND_LABELS",
    "create_alert",
    "delete_alert",
    "email_problem",
    "get_alert",
    "list_alerts",
    "list_events",
    "min_changed_queries",
    "notes",
    "to_read",
    "update_alert",
]

# What a person reads for each kind of rule (the API keeps the kinds' names).
KIND_LABELS = {
    "drop": "Drop",
    "drop_from_baseline": "Drop from a baseline",
    "significant_drop": "Significant drop",
    "below": "Below a threshold",
    "run_failed": "Run failed",
}
NO_SMTP = (
    "No SMTP server is configured (RELEVO_SMTP_URL): the e-mail addresses are kept, but "
    "each e-mail will fail when the alert fires."
)

MAX_EMAIL = 320
# One plain address per entry: a dot-atom local part (RFC 5321, ASCII) and a dotted host
# name. Nothing else may pass, because the address becomes the To header and the SMTP
# recipient as it is: a line break would add headers (Bcc), a comma more recipients, each
# of which must count against the 20 entries a rule may have.
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_SEPARATORS = frozenset(",; <>")


def email_problem(address: str) -> str | None:
    """Return why ``address`` is not one plain e-mail address (name@example.com), or None."""
    shown = repr(address if len(address) <= 100 else address[:100] + "...")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in address):
        return f"{shown} holds a line break or control character."
    if address.count("@") > 1 and any(c in _SEPARATORS for c in address):
        return f"{shown} is more than one address: give each its own entry."
    local, at, domain = address.rpartition("@")
    labels = domain.split(".")
    if (
        not at
        or len(address) > MAX_EMAIL
        or len(local) > 64
        or _LOCAL.fullmatch(local) is None
        or len(labels) < 2
        or not all(_LABEL.fullmatch(label) for label in labels)
        or labels[-1].isdigit()
    ):
        return (
            f"{shown} is not an e-mail address like name@example.com "
            "(ASCII; an international domain in its xn-- form)."
        )
    return None


def min_changed_queries(alpha: float) -> int | None:
    """Return the fewest queries whose score must change for a significant_drop at ``alpha``
    to be able to fire, or None when no number can.

    The paired randomization test (app.scoring.significance) flips the signs of the deltas;
    unchanged queries flip nothing. With n changed queries, the observed signs and their
    mirror image are 2 of the 2ⁿ patterns at least as extreme, so p is at least 2 / 2ⁿ
    (the estimate from FLIPS draws at least 1 / (1 + FLIPS)): it falls below alpha only
    once 2 / 2ⁿ < alpha.
    """
    if alpha <= 1 / (1 + FLIPS):
        return None
    n = 1
    while 2.0 ** (1 - n) >= alpha:
        n += 1
    return n


def notes(alert: Alert, *, email_enabled: bool) -> list[str]:
    """Return what a person should know about the rule: when it cannot fire, or cannot
    deliver."""
    said = []
    if alert.kind == "significant_drop":
        least = min_changed_queries(alert.alpha)
        if least is None:
            said.append(
                f"With alpha = {alert.alpha:g} this rule can never fire: the test's p-value "
                f"never goes below 1/{1 + FLIPS}."
            )
        else:
            said.append(
                f"Fires only when at least {least} queries changed score between the two "
                f"runs: with fewer, the sign-flip test's p-value cannot go below "
                f"alpha = {alert.alpha:g} (it is at least 2/2^n with n changed queries)."
            )
    if alert.email and not email_enabled:
        said.append(NO_SMTP)
    return said


def _emails(values: list[str]) -> list[str]:
    cleaned = []
    for index, value in enumerate(values):
        address = value.strip()
        problem = email_problem(address)
        if problem is not None:
            raise Invalid(("email", index), problem)
        cleaned.append(address)
    return cleaned


def _check_rule(session: Session, case: Case, alert: Alert) -> None:
    if alert.metric_scorer_id == case.scorer_id:
        alert.metric_scorer_id = None  # the primary score
    if alert.metric_scorer_id is not None and alert.metric_scorer_id not in (
        case.metric_scorer_ids or []
    ):
        raise Invalid(
            "metric_scorer_id",
            f"Scorer {alert.metric_scorer_id} is not one of case {case.id}'s metrics.",
        )
    if alert.kind == "drop" and alert.points is None:
        raise Invalid("points", "A drop alert needs points: how far the score must fall.")
    if alert.kind == "below" and alert.threshold is None:
        raise Invalid("threshold", "A below alert needs a threshold (0-100).")
    if alert.kind == "drop_from_baseline" and alert.baseline_run_id is None:
        raise Invalid("baseline_run_id", "A drop_from_baseline alert needs a baseline run.")
    if alert.baseline_run_id is not None:  # whatever the kind: the row refers to it
        baseline = session.get(Run, alert.baseline_run_id)
        if baseline is None or baseline.case_id != case.id:
            raise Invalid("baseline_run_id", f"Case {case.id} has no run {alert.baseline_run_id}.")


def create_alert(*, session: Session, case: Case, user: User, body: AlertCreate) -> Alert:
    """Add an alert rule to the case (422 when the rule lacks what its kind needs)."""
    alert = Alert(
        case_id=case.id,
        kind=body.kind,
        metric_scorer_id=body.metric_scorer_id,
        points=body.points,
        baseline_run_id=body.baseline_run_id,
        alpha=body.alpha,
        threshold=body.threshold,
        error_share=body.error_share,
        webhook_ids=webhooks.usable_webhook_ids(
            session=session, user=user, case=case, ids=body.webhook_ids
        ),
        email=_emails(body.email),
        created_by_id=user.id,
    )
    _check_rule(session, case, alert)
    session.add(alert)
    session.flush()
    return alert


def list_alerts(*, session: Session, case: Case) -> list[Alert]:
    """Return the case's alert rules, oldest first."""
    return list(session.scalars(select(Alert).where(Alert.case_id == case.id).order_by(Alert.id)))


def get_alert(*, session: Session, case: Case, alert_id: int) -> Alert:
    """Return one of the case's alert rules, or 404."""
    found = session.get(Alert, alert_id) if valid_id(alert_id) else None
    if found is None or found.case_id != case.id:
        raise NotFound(f"Case {case.id} has no alert {alert_id}.")
    return found


def update_alert(
    *, session: Session, case: Case, user: User, alert: Alert, body: AlertUpdate
) -> Alert:
    """Change an alert rule's parameters or where it is delivered."""
    fields = body.model_dump(exclude_unset=True)
    if "webhook_ids" in fields and fields["webhook_ids"] is not None:
        fields["webhook_ids"] = webhooks.usable_webhook_ids(
            session=session, user=user, case=case, ids=fields["webhook_ids"]
        )
    if "email" in fields and fields["email"] is not None:
        fields["email"] = _emails(fields["email"])
    for name, value in fields.items():
        if value is not None or name in ("points", "baseline_run_id", "threshold"):
            setattr(alert, name, value)
    _check_rule(session, case, alert)
    session.flush()
    return alert


def delete_alert(*, session: Session, alert: Alert) -> None:
    """Delete an alert rule and its events."""
    session.delete(alert)
    session.flush()


def to_read(alert: Alert, *, email_enabled: bool = True) -> AlertRead:
    """Return the API view of an alert rule, with its notes (``email_enabled``: whether this
    process may send e-mail, RELEVO_SMTP_URL)."""
    read = AlertRead.model_validate(alert)
    read.notes = notes(alert, email_enabled=email_enabled)
    return read


def list_events(*, session: Session, case: Case, limit: int = 100) -> list[EventRead]:
    """Return the case's triggered events, newest first, with their deliveries."""
    events = list(
        session.scalars(
            select(AlertEvent)
            .where(AlertEvent.case_id == case.id)
            .order_by(AlertEvent.id.desc())
            .limit(limit)
        )
    )
    deliveries: dict[int, list[DeliveryRead]] = {e.id: [] for e in events}
    if events:
        for row in session.scalars(
            select(Delivery).where(Delivery.event_id.in_(deliveries)).order_by(Delivery.id)
        ):
            at = row.last_attempt_at or row.created_at
            deliveries[row.event_id].append(
                DeliveryRead(
                    webhook_id=row.webhook_id,
                    email=row.email,
                    status=row.status,
                    code=row.code,
                    attempts=row.attempts,
                    error=row.error,
                    at=as_utc(at),
                )
            )
    return [
        EventRead(
            id=e.id,
            alert_id=e.alert_id,
            run_id=e.run_id,
            created_at=as_utc(e.created_at),
            payload=e.payload,
            deliveries=deliveries[e.id],
        )
        for e in events
    ]
