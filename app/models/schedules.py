"""Watching a case over time: schedules, alert rules and their events, webhooks, annotations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, utcnow
from app.secret_box import register_sealed_column, seal_on_flush


class CaseSchedule(Base):
    """A case's cron schedule (UTC) and the next time it is due."""

    __tablename__ = "case_schedules"

    case_id: Mapped[int] = mapped_column(
        ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True
    )
    cron: Mapped[str] = mapped_column(String(100))
    # None: the case's current try at the time of each run.
    try_number: Mapped[int | None] = mapped_column(default=None)
    next_run_at: Mapped[datetime] = mapped_column(index=True)
    last_fired_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScheduleFiring(Base):
    """One due time of a case's schedule that started a run: at most one per (case, time)."""

    __tablename__ = "schedule_firings"
    __table_args__ = (UniqueConstraint("case_id", "due_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    due_at: Mapped[datetime]
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), default=None
    )
    fired_at: Mapped[datetime] = mapped_column(default=utcnow)


class Webhook(Base):
    """Where alerts are POSTed; the secret (sealed at rest by app.secret_box) is write-only."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str | None] = mapped_column(Text, default=None)
    # The URL's user:password@, taken out of it (sealed like the secret, never returned).
    basic_auth: Mapped[str | None] = mapped_column(Text, default=None)
    team_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


register_sealed_column("webhooks", "secret")
register_sealed_column("webhooks", "basic_auth")
seal_on_flush(Webhook, "secret", "basic_auth")  # set in clear, sealed for its row when flushed


class Alert(Base):
    """An alert rule on a case's score, evaluated whenever a run of the case ends."""

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(30))
    metric_scorer_id: Mapped[int | None] = mapped_column(
        ForeignKey("scorers.id", ondelete="SET NULL"), default=None
    )
    points: Mapped[float | None] = mapped_column(Float, default=None)
    baseline_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), default=None
    )
    alpha: Mapped[float] = mapped_column(Float, default=0.05)
    threshold: Mapped[float | None] = mapped_column(Float, default=None)
    error_share: Mapped[float] = mapped_column(Float, default=0.2)
    webhook_ids: Mapped[list[Any]] = mapped_column(default=list)
    email: Mapped[list[Any]] = mapped_column(default=list)
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AlertEvent(Base):
    """An alert that triggered on a run: at most once per (alert, run)."""

    __tablename__ = "alert_events"
    __table_args__ = (
        UniqueConstraint("alert_id", "run_id"),
        Index("ix_alert_events_case_id", "case_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"))
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AlertCheck(Base):
    """That a run's end has been looked at by the alert rules (so it is done once)."""

    __tablename__ = "alert_checks"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    # Whether any alert triggered on this run (the dashboard's alert state).
    triggered: Mapped[bool] = mapped_column(default=False)
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


class Delivery(Base):
    """One event sent to one webhook or e-mail address, with its attempts."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (Index("ix_alert_deliveries_due", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(
        ForeignKey("alert_events.id", ondelete="CASCADE"), index=True
    )
    webhook_id: Mapped[int | None] = mapped_column(
        ForeignKey("webhooks.id", ondelete="SET NULL"), default=None
    )
    email: Mapped[str | None] = mapped_column(String(320), default=None)
    # pending, delivered, failed (gave up), refused (the outbound policy forbids the URL)
    status: Mapped[str] = mapped_column(String(12), default="pending")
    code: Mapped[int | None] = mapped_column(default=None)
    attempts: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    last_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Annotation(Base):
    """A note on a case's timeline, at a time or on a run; automatic ones describe a new try."""

    __tablename__ = "annotations"
    __table_args__ = (UniqueConstraint("case_id", "try_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), default=None
    )
    auto: Mapped[bool] = mapped_column(default=False)
    # Set on automatic annotations only: the try they describe (one each).
    try_number: Mapped[int | None] = mapped_column(default=None)
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The name of the API key of the agent that wrote it (or whose action it notes), else None.
    agent: Mapped[str | None] = mapped_column(String(200), default=None)
