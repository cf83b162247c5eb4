"""teams: teams, members, what each resource is shared with, disabled users

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SHARES = (
    ("case_teams", "cases", "case_id"),
    ("scorer_teams", "scorers", "scorer_id"),
    ("search_endpoint_teams", "search_endpoints", "search_endpoint_id"),
    ("book_teams", "books", "book_id"),
)


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
    )
    op.create_table(
        "team_members",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=10), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_team_members_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_team_members_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("team_id", "user_id", name=op.f("pk_team_members")),
    )
    op.create_index(op.f("ix_team_members_user_id"), "team_members", ["user_id"])
    for table, resource_table, column in SHARES:
        op.create_table(
            table,
            sa.Column(column, sa.Integer(), nullable=False),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.ForeignKeyConstraint(
                [column],
                [f"{resource_table}.id"],
                name=op.f(f"fk_{table}_{column}_{resource_table}"),
                ondelete="CASCADE",
            ),
            sa.ForeignKeyConstraint(
                ["team_id"],
                ["teams.id"],
                name=op.f(f"fk_{table}_team_id_teams"),
                ondelete="CASCADE",
            ),
            sa.PrimaryKeyConstraint(column, "team_id", name=op.f(f"pk_{table}")),
        )
        op.create_index(op.f(f"ix_{table}_team_id"), table, ["team_id"])
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("is_disabled", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("is_disabled")
    for table, _resource_table, _column in reversed(SHARES):
        op.drop_index(op.f(f"ix_{table}_team_id"), table_name=table)
        op.drop_table(table)
    op.drop_index(op.f("ix_team_members_user_id"), table_name="team_members")
    op.drop_table("team_members")
    op.drop_table("teams")
