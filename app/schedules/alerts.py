"""Alert rules on a case: create, list, change, delete, and the events they triggered."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
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
from app.schedules.service import as_utc

__all__ = [
    "create_alert",
    "delete_alert",
    "get_alert",
    "list_alerts",
    "list_events",
    "to_read",
    "update_alert",
]

MAX_EMAIL = 320


def _emails(values: list[str]) -> list[str]:
    cleaned = []
    for value in values:
        address = value.strip()
        local, at, domain = address.partition("@")
        if not at or not local or "." not in domain or len(address) > MAX_EMAIL or " " in address:
            raise Invalid("email", f"{value!r} is not an e-mail address.")
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
    if alert.kind == "drop_from_baseline":
        if alert.baseline_run_id is None:
            raise Invalid("baseline_run_id", "A drop_from_baseline alert needs a baseline run.")
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
        webhook_ids=webhooks.usable_webhook_ids(session=session, user=user, ids=body.webhook_ids),
        email=_emails(body.email),
        created_by_id=user.id,
    )
    _check_rule(session, case, alert)
    session.add(alert)
    session.commit()
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
            session=session, user=user, ids=fields["webhook_ids"]
        )
    if "email" in fields and fields["email"] is not None:
        fields["email"] = _emails(fields["email"])
    for name, value in fields.items():
        if value is not None or name in ("points", "baseline_run_id", "threshold"):
            setattr(alert, name, value)
    _check_rule(session, case, alert)
    session.commit()
    return alert


def delete_alert(*, session: Session, alert: Alert) -> None:
    """Delete an alert rule and its events."""
    session.delete(alert)
    session.commit()


def to_read(alert: Alert) -> AlertRead:
    """Return the API view of an alert rule."""
    return AlertRead.model_validate(alert)


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
