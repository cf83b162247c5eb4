"""schedules alerts webhooks and annotations

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
NOW = sa.DateTime(timezone=True)


def _fk(column: str, table: str, ondelete: str, *, nullable: bool = True) -> sa.Column:
    return sa.Column(
        column, sa.Integer(), sa.ForeignKey(f"{table}.id", ondelete=ondelete), nullable=nullable
    )


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("trigger", sa.String(length=10), server_default="user", nullable=False)
        )
    op.create_table(
        "case_schedules",
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("cron", sa.String(length=100), nullable=False),
        sa.Column("try_number", sa.Integer(), nullable=True),
        sa.Column("next_run_at", NOW, nullable=False),
        sa.Column("last_fired_at", NOW, nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["cases.id"],
            name=op.f("fk_case_schedules_case_id_cases"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("case_id", name=op.f("pk_case_schedules")),
    )
    op.create_index(
        op.f("ix_case_schedules_next_run_at"), "case_schedules", ["next_run_at"], unique=False
    )
    op.create_table(
        "schedule_firings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("due_at", NOW, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("fired_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["cases.id"],
            name=op.f("fk_schedule_firings_case_id_cases"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_schedule_firings_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_firings")),
        sa.UniqueConstraint("case_id", "due_at", name=op.f("uq_schedule_firings_case_id")),
    )
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("team_ids", JSON, nullable=False),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_webhooks_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    op.create_index(op.f("ix_webhooks_owner_id"), "webhooks", ["owner_id"], unique=False)
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=30), nullable=False),
        sa.Column("metric_scorer_id", sa.Integer(), nullable=True),
        sa.Column("points", sa.Float(), nullable=True),
        sa.Column("baseline_run_id", sa.Integer(), nullable=True),
        sa.Column("alpha", sa.Float(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("error_share", sa.Float(), nullable=False),
        sa.Column("webhook_ids", JSON, nullable=False),
        sa.Column("email", JSON, nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_alerts_case_id_cases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["metric_scorer_id"],
            ["scorers.id"],
            name=op.f("fk_alerts_metric_scorer_id_scorers"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["baseline_run_id"],
            ["runs.id"],
            name=op.f("fk_alerts_baseline_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_alerts_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts")),
    )
    op.create_index(op.f("ix_alerts_case_id"), "alerts", ["case_id"], unique=False)
    op.create_table(
        "alert_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_id"],
            ["alerts.id"],
            name=op.f("fk_alert_events_alert_id_alerts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["cases.id"],
            name=op.f("fk_alert_events_case_id_cases"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_alert_events_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_events")),
        sa.UniqueConstraint("alert_id", "run_id", name=op.f("uq_alert_events_alert_id")),
    )
    op.create_index("ix_alert_events_case_id", "alert_events", ["case_id", "id"], unique=False)
    op.create_table(
        "alert_checks",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("triggered", sa.Boolean(), nullable=False),
        sa.Column("checked_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_alert_checks_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_alert_checks")),
    )
    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("code", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", NOW, nullable=True),
        sa.Column("last_attempt_at", NOW, nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["alert_events.id"],
            name=op.f("fk_alert_deliveries_event_id_alert_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_alert_deliveries_webhook_id_webhooks"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_deliveries")),
    )
    op.create_index(
        "ix_alert_deliveries_due", "alert_deliveries", ["status", "next_attempt_at"], unique=False
    )
    op.create_index(
        op.f("ix_alert_deliveries_event_id"), "alert_deliveries", ["event_id"], unique=False
    )
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("at", NOW, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("auto", sa.Boolean(), nullable=False),
        sa.Column("try_number", sa.Integer(), nullable=True),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["cases.id"],
            name=op.f("fk_annotations_case_id_cases"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_annotations_run_id_runs"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_annotations_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
        sa.UniqueConstraint("case_id", "try_number", name=op.f("uq_annotations_case_id")),
    )
    op.create_index(op.f("ix_annotations_case_id"), "annotations", ["case_id"], unique=False)


def downgrade() -> None:
    for table in (
        "annotations",
        "alert_deliveries",
        "alert_checks",
        "alert_events",
        "alerts",
        "webhooks",
        "schedule_firings",
        "case_schedules",
    ):
        op.drop_table(table)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("trigger")
