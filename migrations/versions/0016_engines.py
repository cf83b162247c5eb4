"""search api vespa and result file endpoints

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27

The new engine words (searchapi, vespa, static) need no change: ``engine`` is plain
VARCHAR(20) text with no CHECK constraint.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("search_endpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mapper_code", sa.Text(), nullable=True))
    op.create_table(
        "static_results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("query_key", sa.Text(), nullable=False),
        sa.Column("doc_id", sa.String(length=500), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column(
            "fields",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["search_endpoints.id"],
            name=op.f("fk_static_results_endpoint_id_search_endpoints"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_static_results")),
    )
    with op.batch_alter_table("static_results", schema=None) as batch_op:
        batch_op.create_index(
            "ix_static_results_endpoint_query", ["endpoint_id", "query_key"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("static_results", schema=None) as batch_op:
        batch_op.drop_index("ix_static_results_endpoint_query")
    op.drop_table("static_results")
    with op.batch_alter_table("search_endpoints", schema=None) as batch_op:
        batch_op.drop_column("mapper_code")
