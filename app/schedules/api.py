"""JSON API: schedules, alerts and their events, webhooks, annotations, the dashboard."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.cases import notes
from app.cases.deps import CaseDep
from app.cases.schemas import AnnotationCreate, AnnotationRead, AnnotationUpdate, ScheduleBody
from app.schedules import alerts, service, webhooks
from app.schedules.dashboard import dashboard
from app.schedules.delivery import current_config
from app.schedules.deps import AlertDep, AnnotationDep, WebhookDep
from app.schedules.pages import watch_page
from app.schedules.schemas import (
    AlertCreate,
    AlertRead,
    AlertUpdate,
    Dashboard,
    EventRead,
    ScheduleRead,
    WatchPage,
    WebhookCreate,
    WebhookRead,
    WebhookUpdate,
)
from app.web_common.deps import SessionDep

router = APIRouter(tags=["schedules"])


def _email_enabled() -> bool:
    return current_config().email_enabled


@router.get("/cases/{case_id}/schedule", response_model=ScheduleRead)
def get_schedule(case: CaseDep, session: SessionDep) -> ScheduleRead:
    """Return the case's schedule (404 when it has none)."""
    return service.to_read(service.require_schedule(session=session, case=case))


@router.put("/cases/{case_id}/schedule", response_model=ScheduleRead)
def put_schedule(body: ScheduleBody, case: CaseDep, session: SessionDep) -> ScheduleRead:
    """Run the case on a cron schedule (UTC), with its current or a pinned try."""
    return service.to_read(service.set_schedule(session=session, case=case, body=body))


@router.delete("/cases/{case_id}/schedule", status_code=204)
def delete_schedule(case: CaseDep, session: SessionDep) -> Response:
    """Stop running the case on a schedule."""
    service.delete_schedule(session=session, case=case)
    return Response(status_code=204)


@router.post("/cases/{case_id}/alerts", response_model=AlertRead, status_code=201)
def create_alert(
    body: AlertCreate, case: CaseDep, user: CurrentUser, session: SessionDep
) -> AlertRead:
    """Add an alert rule, evaluated whenever a run of the case ends (its notes say when it
    cannot fire or deliver)."""
    alert = alerts.create_alert(session=session, case=case, user=user, body=body)
    return alerts.to_read(alert, email_enabled=_email_enabled())


@router.get("/cases/{case_id}/alerts", response_model=list[AlertRead])
def list_alerts(case: CaseDep, session: SessionDep) -> list[AlertRead]:
    """Return the case's alert rules."""
    email = _email_enabled()
    return [
        alerts.to_read(a, email_enabled=email)
        for a in alerts.list_alerts(session=session, case=case)
    ]


@router.get("/cases/{case_id}/alerts/events", response_model=list[EventRead])
def list_events(case: CaseDep, session: SessionDep) -> list[EventRead]:
    """Return the alerts that triggered on the case's runs, newest first, with deliveries."""
    return alerts.list_events(session=session, case=case)


@router.get("/cases/{case_id}/alerts/{alert_id}", response_model=AlertRead)
def get_alert(alert: AlertDep, case: CaseDep, session: SessionDep) -> AlertRead:
    """Return one alert rule."""
    return alerts.to_read(alert, email_enabled=_email_enabled())


@router.patch("/cases/{case_id}/alerts/{alert_id}", response_model=AlertRead)
def update_alert(
    alert: AlertDep, body: AlertUpdate, case: CaseDep, user: CurrentUser, session: SessionDep
) -> AlertRead:
    """Change an alert rule."""
    return alerts.to_read(
        alerts.update_alert(session=session, case=case, user=user, alert=alert, body=body),
        email_enabled=_email_enabled(),
    )


@router.delete("/cases/{case_id}/alerts/{alert_id}", status_code=204)
def delete_alert(alert: AlertDep, case: CaseDep, session: SessionDep) -> Response:
    """Delete an alert rule."""
    alerts.delete_alert(session=session, alert=alert)
    return Response(status_code=204)


@router.post("/webhooks", response_model=WebhookRead, status_code=201)
def create_webhook(body: WebhookCreate, user: CurrentUser, session: SessionDep) -> WebhookRead:
    """Create a webhook (its secret is write-only)."""
    return webhooks.to_read(webhooks.create_webhook(session=session, user=user, body=body))


@router.get("/webhooks", response_model=list[WebhookRead])
def list_webhooks(user: CurrentUser, session: SessionDep) -> list[WebhookRead]:
    """Return the webhooks the caller may use."""
    return [webhooks.to_read(w) for w in webhooks.list_webhooks(session=session, user=user)]


@router.get("/webhooks/{webhook_id}", response_model=WebhookRead)
def get_webhook(webhook: WebhookDep, user: CurrentUser, session: SessionDep) -> WebhookRead:
    """Return a webhook."""
    return webhooks.to_read(webhook)


@router.patch("/webhooks/{webhook_id}", response_model=WebhookRead)
def update_webhook(
    webhook: WebhookDep, body: WebhookUpdate, user: CurrentUser, session: SessionDep
) -> WebhookRead:
    """Change a webhook."""
    return webhooks.to_read(
        webhooks.update_webhook(session=session, user=user, webhook=webhook, body=body)
    )


@router.delete("/webhooks/{webhook_id}", status_code=204)
def delete_webhook(webhook: WebhookDep, user: CurrentUser, session: SessionDep) -> Response:
    """Delete a webhook (owner only)."""
    webhooks.delete_webhook(session=session, user=user, webhook=webhook)
    return Response(status_code=204)


@router.post("/cases/{case_id}/annotations", response_model=AnnotationRead, status_code=201)
def create_annotation(
    body: AnnotationCreate, case: CaseDep, user: CurrentUser, session: SessionDep
) -> AnnotationRead:
    """Add a note to the case's timeline, at a time or on a run."""
    return notes.to_read(notes.create_annotation(session=session, case=case, user=user, body=body))


@router.get("/cases/{case_id}/annotations", response_model=list[AnnotationRead])
def list_annotations(case: CaseDep, session: SessionDep) -> list[AnnotationRead]:
    """Return the case's annotations (the automatic ones of new tries included)."""
    return notes.timeline(session=session, case=case)


@router.patch("/cases/{case_id}/annotations/{annotation_id}", response_model=AnnotationRead)
def update_annotation(
    found: AnnotationDep, body: AnnotationUpdate, case: CaseDep, session: SessionDep
) -> AnnotationRead:
    """Change a note's text or time."""
    return notes.to_read(notes.update_annotation(session=session, annotation=found, body=body))


@router.delete("/cases/{case_id}/annotations/{annotation_id}", status_code=204)
def delete_annotation(found: AnnotationDep, case: CaseDep, session: SessionDep) -> Response:
    """Delete a note (automatic ones answer 409)."""
    notes.delete_annotation(session=session, annotation=found)
    return Response(status_code=204)


@router.get("/dashboard", response_model=Dashboard, name="dashboard_json")
def get_dashboard(user: CurrentUser, session: SessionDep) -> Dashboard:
    """Return every case the caller may see with its trend and alert state, worst first."""
    return dashboard(session=session, user=user)


@router.get("/cases/{case_id}/watch", response_model=WatchPage, name="case_watch_json")
def get_watch(case: CaseDep, user: CurrentUser, session: SessionDep) -> WatchPage:
    """Return the case's schedule, alert rules, recent alerts with deliveries, and notes."""
    return watch_page(session=session, case=case, user=user)
