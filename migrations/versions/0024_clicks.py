"""Click logs: UBI 1.3.0 queries and events, shared with teams like books.

Revision ID: 0024_clicks
Revises: 0023_one
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0024_clicks"
down_revision: str | None = "0023_one"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "click_logs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("position_base", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_click_logs_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_click_logs")),
    )
    op.create_index(op.f("ix_click_logs_owner_id"), "click_logs", ["owner_id"])
    op.create_table(
        "click_log_teams",
        sa.Column("click_log_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["click_log_id"],
            ["click_logs.id"],
            name=op.f("fk_click_log_teams_click_log_id_click_logs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_click_log_teams_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("click_log_id", "team_id", name=op.f("pk_click_log_teams")),
    )
    op.create_index(op.f("ix_click_log_teams_team_id"), "click_log_teams", ["team_id"])
    op.create_table(
        "ubi_queries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("click_log_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("user_query", sa.Text(), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=True),
        sa.Column("client_id", sa.String(length=100), nullable=True),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hit_ids", JSON, nullable=True),
        sa.ForeignKeyConstraint(
            ["click_log_id"],
            ["click_logs.id"],
            name=op.f("fk_ubi_queries_click_log_id_click_logs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ubi_queries")),
        sa.UniqueConstraint("click_log_id", "key", name=op.f("uq_ubi_queries_click_log_id")),
    )
    op.create_index("ix_ubi_queries_log_text", "ubi_queries", ["click_log_id", "user_query"])
    op.create_table(
        "ubi_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("click_log_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("action_name", sa.String(length=100), nullable=False),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("query_id", sa.String(length=100), nullable=True),
        sa.Column("client_id", sa.String(length=100), nullable=True),
        sa.Column("session_id", sa.String(length=100), nullable=True),
        sa.Column("application", sa.String(length=100), nullable=True),
        sa.Column("user_query", sa.Text(), nullable=True),
        sa.Column("object_id", sa.String(length=256), nullable=True),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["click_log_id"],
            ["click_logs.id"],
            name=op.f("fk_ubi_events_click_log_id_click_logs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ubi_events")),
        sa.UniqueConstraint("click_log_id", "digest", name=op.f("uq_ubi_events_click_log_id")),
    )
    op.create_index("ix_ubi_events_log_query", "ubi_events", ["click_log_id", "query_id"])
    op.create_table(
        "click_raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("click_log_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=10), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("settings", JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["book_id"],
            ["books.id"],
            name=op.f("fk_click_raters_book_id_books"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["click_log_id"],
            ["click_logs.id"],
            name=op.f("fk_click_raters_click_log_id_click_logs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_click_raters")),
        sa.UniqueConstraint(
            "book_id", "click_log_id", "model", name=op.f("uq_click_raters_book_id")
        ),
    )
    op.create_index(op.f("ix_click_raters_book_id"), "click_raters", ["book_id"])
    op.create_index(op.f("ix_click_raters_click_log_id"), "click_raters", ["click_log_id"])
    op.create_table(
        "click_judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("impressions", sa.Integer(), nullable=False),
        sa.Column("clicks", sa.Integer(), nullable=False),
        sa.Column("expected_clicks", sa.Float(), nullable=False),
        sa.Column("estimate", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["rater_id"],
            ["click_raters.id"],
            name=op.f("fk_click_judgements_rater_id_click_raters"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["book_id"],
            ["books.id"],
            name=op.f("fk_click_judgements_book_id_books"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["pair_id"],
            ["book_pairs.id"],
            name=op.f("fk_click_judgements_pair_id_book_pairs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_click_judgements")),
        sa.UniqueConstraint("rater_id", "pair_id", name=op.f("uq_click_judgements_rater_id")),
    )
    op.create_index("ix_click_judgements_book", "click_judgements", ["book_id", "rater_id"])


def downgrade() -> None:
    op.drop_index("ix_click_judgements_book", table_name="click_judgements")
    op.drop_table("click_judgements")
    op.drop_index(op.f("ix_click_raters_click_log_id"), table_name="click_raters")
    op.drop_index(op.f("ix_click_raters_book_id"), table_name="click_raters")
    op.drop_table("click_raters")
    op.drop_index("ix_ubi_events_log_query", table_name="ubi_events")
    op.drop_table("ubi_events")
    op.drop_index("ix_ubi_queries_log_text", table_name="ubi_queries")
    op.drop_table("ubi_queries")
    op.drop_index(op.f("ix_click_log_teams_team_id"), table_name="click_log_teams")
    op.drop_table("click_log_teams")
    op.drop_index(op.f("ix_click_logs_owner_id"), table_name="click_logs")
    op.drop_table("click_logs")
