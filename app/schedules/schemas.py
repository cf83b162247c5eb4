"""Bodies of schedules, alerts, webhooks, annotations and the dashboard."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.bodies import Name, RequestBody, ResponseBody, TeamIds
from app.cases.schemas import AnnotationRead

# A time given with or without an offset (none: UTC), kept in UTC.

AlertKind = Literal["drop", "drop_from_baseline", "significant_drop", "below", "run_failed"]
Email = Field(max_length=20)


class ScheduleRead(ResponseBody):
    case_id: int
    cron: str
    try_number: int | None
    next_run_at: datetime
    last_fired_at: datetime | None


class AlertCreate(RequestBody):
    kind: AlertKind
    metric_scorer_id: int | None = None
    points: float | None = Field(default=None, gt=0, le=100)
    baseline_run_id: int | None = Field(default=None, ge=1, le=2**31 - 1)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    threshold: float | None = Field(default=None, ge=0, le=100)
    error_share: float = Field(default=0.2, ge=0, le=1)
    webhook_ids: list[int] = Field(default_factory=list, max_length=20)
    email: list[str] = Field(default_factory=list, max_length=20)


class AlertUpdate(RequestBody):
    points: float | None = Field(default=None, gt=0, le=100)
    baseline_run_id: int | None = Field(default=None, ge=1, le=2**31 - 1)
    alpha: float | None = Field(default=None, gt=0, lt=1)
    threshold: float | None = Field(default=None, ge=0, le=100)
    error_share: float | None = Field(default=None, ge=0, le=1)
    webhook_ids: list[int] | None = Field(default=None, max_length=20)
    email: list[str] | None = Field(default=None, max_length=20)


class AlertRead(ResponseBody):
    id: int
    case_id: int
    kind: str
    metric_scorer_id: int | None
    points: float | None
    baseline_run_id: int | None
    alpha: float
    threshold: float | None
    error_share: float
    webhook_ids: list[int]
    email: list[str]
    created_at: datetime
    notes: list[str] = Field(
        default_factory=list,
        description="When the rule cannot fire or deliver: the fewest changed queries a "
        "significant_drop needs at its alpha; e-mail addresses with no SMTP server configured",
    )


class DeliveryRead(ResponseBody):
    webhook_id: int | None
    email: str | None
    status: str
    code: int | None
    attempts: int
    error: str | None
    at: datetime | None


class EventRead(ResponseBody):
    id: int
    alert_id: int
    run_id: int
    created_at: datetime
    payload: dict[str, Any]
    deliveries: list[DeliveryRead]


class WebhookCreate(RequestBody):
    name: Name
    url: str = Field(min_length=1, max_length=2000)
    secret: str | None = Field(default=None, max_length=500)
    team_ids: TeamIds | None = None


class WebhookUpdate(RequestBody):
    name: Name | None = None
    url: str | None = Field(default=None, min_length=1, max_length=2000)
    secret: str | None = Field(default=None, max_length=500)
    team_ids: TeamIds | None = None


class WebhookRead(ResponseBody):
    id: int
    name: str
    url: str
    has_secret: bool
    has_basic_auth: bool = False  # the URL's user:password@, kept sealed apart
    team_ids: list[int]
    created_at: datetime


class DashboardAlert(ResponseBody):
    """An alert that triggered and that no later run has cleared yet."""

    alert_id: int
    kind: str
    reason: str
    run_id: int
    created_at: datetime


class DashboardCase(ResponseBody):
    id: int
    name: str
    score: float | None
    delta_7d: float | None = Field(
        description="The latest run's score minus the first run's of the last 7 days, both "
        "re-scored with today's ratings, weights and aggregate (null without two)"
    )
    sparkline: list[float] = Field(
        description="The case scores of the last runs as stored (recounted after a change of "
        "weights or aggregate, not re-scored with later ratings), oldest first"
    )
    last_run_at: datetime | None
    next_run_at: datetime | None
    alert_state: Literal["ok", "triggered"] | None = Field(
        description="triggered while an alert event stands: no later run has cleared it "
        "(null: the case has no alert rules)"
    )
    delta_last_run: float | None = Field(
        default=None,
        description="The latest finished run's score minus the finished case run's before it "
        "(never a sweep's or a draft's), both re-scored with today's ratings, weights and "
        "aggregate: the case page's tile and the alerts show the same number "
        "(null without two)",
    )
    last_run_failed: bool = Field(
        default=False,
        description="The latest ended run failed, or every one of its queries errored "
        "(score is then the score of an earlier run)",
    )
    alert: DashboardAlert | None = Field(
        default=None,
        description="The newest alert event that stands: a run after it cleared it when that "
        "run was evaluated and the rule did not fire (for score rules, a run with a score)",
    )


class Dashboard(ResponseBody):
    cases: list[DashboardCase]


class WatchPage(ResponseBody):
    """A case's schedule, alert rules, recent alerts (with their deliveries) and notes."""

    case_id: int
    case_name: str
    schedule: ScheduleRead | None
    alerts: list[AlertRead]
    events: list[EventRead] = Field(description="The latest triggered alerts, newest first")
    annotations: list[AnnotationRead]
    webhooks: list[WebhookRead] = Field(description="The webhooks the caller may alert")
    email_enabled: bool = Field(
        default=True,
        description="Whether alerts may be e-mailed: an SMTP server is configured "
        "(RELEVO_SMTP_URL)",
    )
