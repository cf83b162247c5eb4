"""The data of the case's "schedule, alerts and notes" card, for its page and its JSON twin."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.cases import notes
from app.models import Case, User
from app.schedules import alerts, service, webhooks
from app.schedules.delivery import current_config
from app.schedules.schemas import WatchPage

__all__ = ["watch_page"]


def watch_page(*, session: Session, case: Case, user: User) -> WatchPage:
    """Return a case's schedule, alert rules, recent alerts with deliveries, and notes."""
    schedule = service.get_schedule(session=session, case=case)
    email = current_config().email_enabled
    return WatchPage(
        case_id=case.id,
        case_name=case.name,
        schedule=None if schedule is None else service.to_read(schedule),
        alerts=[
            alerts.to_read(a, email_enabled=email)
            for a in alerts.list_alerts(session=session, case=case)
        ],
        events=alerts.list_events(session=session, case=case, limit=20),
        annotations=notes.timeline(session=session, case=case),
        webhooks=[
            webhooks.to_read(w)
            for w in webhooks.list_webhooks(session=session, user=user)
            if webhooks.may_receive(session=session, webhook=w, case=case)
        ],
        email_enabled=email,
    )
