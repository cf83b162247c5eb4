"""run queue: chunked runs, engine limits shared by workers, and the job queue's tables

Runs executed by workers are split into chunks: ``runs.chunks`` says how many, and
``runs.chunks_done`` lists the ones whose results are committed. ``engine_slots`` and
``engine_rates`` hold the per-endpoint concurrency slots and request-rate reservations that
every worker shares. On PostgreSQL the job queue's own schema (procrastinate's) is created
here too, so that one ``relevo db upgrade`` prepares everything.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("chunks", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "chunks_done",
                sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
                nullable=True,
            )
        )
    op.create_table(
        "engine_slots",
        sa.Column("engine_key", sa.String(length=64), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("engine_key", "slot"),
    )
    op.create_table(
        "engine_rates",
        sa.Column("engine_key", sa.String(length=64), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("engine_key"),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from app.jobs.schema import queue_schema_sql

        bind.exec_driver_sql(queue_schema_sql().replace("%", "%%"))


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from app.jobs.schema import drop_queue_schema_sql

        bind.exec_driver_sql(drop_queue_schema_sql().replace("%", "%%"))
    op.drop_table("engine_rates")
    op.drop_table("engine_slots")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("chunks_done")
        batch_op.drop_column("chunks")
