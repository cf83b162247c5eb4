"""scorer environment: JavaScript scorers run in Relevo's or Quepid's environment

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scorers", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("environment", sa.String(length=16), nullable=False, server_default="relevo")
        )


def downgrade() -> None:
    with op.batch_alter_table("scorers", schema=None) as batch_op:
        batch_op.drop_column("environment")
