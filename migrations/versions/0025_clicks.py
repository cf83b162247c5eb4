"""Click logs pull from engines (a cursor per endpoint and index) and count each query's hits;
sampled queries keep their inclusion probability.

Revision ID: 0025_clicks
Revises: 0024_clicks
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0025_clicks"
down_revision: str | None = "0024_clicks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("click_logs") as batch:
        batch.add_column(sa.Column("pull_cursors", JSON, nullable=False, server_default="{}"))
        batch.add_column(sa.Column("last_pull", JSON, nullable=True))
    with op.batch_alter_table("queries") as batch:
        batch.add_column(sa.Column("inclusion_probability", sa.Float(), nullable=True))
    with op.batch_alter_table("ubi_queries") as batch:
        batch.add_column(sa.Column("hit_count", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ubi_queries") as batch:
        batch.drop_column("hit_count")
    with op.batch_alter_table("queries") as batch:
        batch.drop_column("inclusion_probability")
    with op.batch_alter_table("click_logs") as batch:
        batch.drop_column("last_pull")
        batch.drop_column("pull_cursors")
