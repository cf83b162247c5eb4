"""case metrics query tags and weights

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    # Existing rows get the meaning they had: no extra metric, the plain mean, no tags,
    # weight 1; past runs carry no per-metric scores (their primary score is unchanged).
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("metric_scorer_ids", JSON, nullable=False, server_default="[]")
        )
        batch_op.add_column(
            sa.Column("aggregate", sa.String(length=16), nullable=False, server_default="mean")
        )
    with op.batch_alter_table("queries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tags", JSON, nullable=False, server_default="[]"))
        batch_op.add_column(sa.Column("weight", sa.Float(), nullable=False, server_default="1"))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("metric_scorer_ids", JSON, nullable=True))
        batch_op.add_column(sa.Column("recorded_metrics", JSON, nullable=True))
    with op.batch_alter_table("run_queries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("metric_scores", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_queries", schema=None) as batch_op:
        batch_op.drop_column("metric_scores")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("recorded_metrics")
        batch_op.drop_column("metric_scorer_ids")
    with op.batch_alter_table("queries", schema=None) as batch_op:
        batch_op.drop_column("weight")
        batch_op.drop_column("tags")
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.drop_column("aggregate")
        batch_op.drop_column("metric_scorer_ids")
