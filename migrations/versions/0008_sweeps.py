"""knob sweeps: the sweeps table, and a run's knob overrides and sweep

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sweeps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("try_number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("grid", JSON, nullable=False),
        sa.Column("base_knobs", JSON, nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["case_id"], ["cases.id"], name=op.f("fk_sweeps_case_id_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweeps")),
    )
    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sweeps_case_id"), ["case_id"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("knobs", JSON, nullable=True))
        batch_op.add_column(sa.Column("sweep_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_sweep_id"), ["sweep_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_runs_sweep_id_sweeps"),
            "sweeps",
            ["sweep_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_runs_sweep_id_sweeps"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_sweep_id"))
        batch_op.drop_column("sweep_id")
        batch_op.drop_column("knobs")
    with op.batch_alter_table("sweeps", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sweeps_case_id"))
    op.drop_table("sweeps")
