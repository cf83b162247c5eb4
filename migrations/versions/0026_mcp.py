"""Agents: API key scopes, draft runs and who (which agent key) made a run, sweep, rating,
annotation or judge run.

Existing keys get every scope, so each keeps every right it had.

Revision ID: 0026_mcp
Revises: 0025_clicks
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_mcp"
down_revision: str | None = "0025_clicks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ALL_SCOPES = "read run write judge"


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(
            sa.Column("scopes", sa.String(length=40), nullable=False, server_default=ALL_SCOPES)
        )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("query_template", sa.Text(), nullable=True))
        batch.add_column(sa.Column("agent", sa.String(length=200), nullable=True))
    for table in ("sweeps", "ratings", "annotations", "judge_runs"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("agent", sa.String(length=200), nullable=True))


def downgrade() -> None:
    for table in ("judge_runs", "annotations", "ratings", "sweeps"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("agent")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("agent")
        batch.drop_column("query_template")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("scopes")
