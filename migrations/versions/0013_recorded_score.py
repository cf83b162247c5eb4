"""recorded score: a run keeps the score it finished with, apart from the re-scored one

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recorded_score", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("recorded_scorer_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            op.f("fk_runs_recorded_scorer_id_scorers"),
            "scorers",
            ["recorded_scorer_id"],
            ["id"],
            ondelete="SET NULL",
        )
    # Earlier runs: the best known record is what they show today (a run still going
    # gets its own when it finishes).
    op.execute("UPDATE runs SET recorded_score = case_score, recorded_scorer_id = scorer_id")


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("fk_runs_recorded_scorer_id_scorers"), type_="foreignkey")
        batch_op.drop_column("recorded_scorer_id")
        batch_op.drop_column("recorded_score")
