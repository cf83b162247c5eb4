"""A case's book sync remembers which kind of rater it took (a person, a judge or a click
model) and that rater's name, so the case page labels a click model's judgements as such.

Revision ID: 0027_fixes
Revises: 0026_mcp
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027_fixes"
down_revision: str | None = "0026_mcp"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("case_book_syncs") as batch:
        batch.add_column(sa.Column("rater_kind", sa.String(length=10), nullable=True))
        batch.add_column(sa.Column("rater_name", sa.String(length=300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_book_syncs") as batch:
        batch.drop_column("rater_name")
        batch.drop_column("rater_kind")
