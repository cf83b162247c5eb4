"""The aggregate a run's recorded scores were averaged with when it finished; judge trials


``runs.recorded_aggregate`` is the case's aggregate ("mean" or "weighted_mean") at the
moment the run finished, stored with ``recorded_score`` and ``recorded_metrics`` and, like
them, never changed afterwards. Runs stored before this revision keep null: which mean they
used was not recorded, and the case's aggregate may have changed since.

``judge_trials`` keeps the result of a judge's *Test on N pairs*, so that the test answers
with a redirect to a page that shows it (a reload no longer asks the judge again).

Revision ID: 0028_onenum
Revises: 0027_fixes
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0028_onenum"
down_revision: str | None = "0027_fixes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("runs", sa.Column("recorded_aggregate", sa.String(length=20), nullable=True))
    op.create_table(
        "judge_trials",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("result", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["judge_id"],
            ["judges.id"],
            name=op.f("fk_judge_trials_judge_id_judges"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_judge_trials_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_trials")),
    )
    op.create_index(op.f("ix_judge_trials_judge_id"), "judge_trials", ["judge_id"])
    op.create_index(op.f("ix_judge_trials_user_id"), "judge_trials", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_judge_trials_user_id"), table_name="judge_trials")
    op.drop_index(op.f("ix_judge_trials_judge_id"), table_name="judge_trials")
    op.drop_table("judge_trials")
    op.drop_column("runs", "recorded_aggregate")
