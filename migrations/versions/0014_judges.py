"""judges language models as raters and secrets at rest

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _fk(column: str, table: str, target: str, ondelete: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete=ondelete
    )


def _created(name: str = "created_at") -> sa.Column[sa.DateTime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
    op.create_table(
        "judges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("api_key_sealed", sa.Text(), nullable=True),
        sa.Column("headers", json, nullable=False),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("max_output_tokens", sa.Integer(), nullable=False),
        sa.Column("requests_per_minute", sa.Integer(), nullable=False),
        sa.Column("tokens_per_minute", sa.Integer(), nullable=False),
        sa.Column("max_concurrency", sa.Integer(), nullable=False),
        sa.Column("price_input_per_mtok", sa.Float(), nullable=True),
        sa.Column("price_output_per_mtok", sa.Float(), nullable=True),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        _created(),
        _fk("owner_id", "judges", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judges")),
    )
    op.create_index(op.f("ix_judges_owner_id"), "judges", ["owner_id"])
    op.create_table(
        "judge_teams",
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        _fk("judge_id", "judge_teams", "judges", "CASCADE"),
        _fk("team_id", "judge_teams", "teams", "CASCADE"),
        sa.PrimaryKeyConstraint("judge_id", "team_id", name=op.f("pk_judge_teams")),
    )
    op.create_index(op.f("ix_judge_teams_team_id"), "judge_teams", ["team_id"])
    op.create_table(
        "judge_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("pairs_mode", sa.String(length=10), nullable=False),
        sa.Column("pair_ids", json, nullable=False),
        sa.Column("budget_usd", sa.Float(), nullable=True),
        sa.Column("budget_tokens", sa.Integer(), nullable=True),
        sa.Column("pairs_total", sa.Integer(), nullable=False),
        sa.Column("judged", sa.Integer(), nullable=False),
        sa.Column("cached", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        _created(),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        _fk("book_id", "judge_runs", "books", "CASCADE"),
        _fk("judge_id", "judge_runs", "judges", "CASCADE"),
        _fk("user_id", "judge_runs", "users", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_runs")),
    )
    op.create_index("ix_judge_runs_book", "judge_runs", ["book_id", "id"])
    op.create_index(op.f("ix_judge_runs_judge_id"), "judge_runs", ["judge_id"])
    op.create_table(
        "judge_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        _created(),
        _fk("run_id", "judge_failures", "judge_runs", "CASCADE"),
        _fk("pair_id", "judge_failures", "book_pairs", "CASCADE"),
        _fk("judge_id", "judge_failures", "judges", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_failures")),
        sa.UniqueConstraint("run_id", "pair_id", name=op.f("uq_judge_failures_run_id")),
    )
    op.create_index(op.f("ix_judge_failures_judge_id"), "judge_failures", ["judge_id"])
    op.create_table(
        "judge_judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("judge_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("rating", sa.Float(), nullable=True),
        sa.Column("unrateable", sa.Boolean(), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("raw_reply", sa.Text(), nullable=True),
        _created("updated_at"),
        _fk("book_id", "judge_judgements", "books", "CASCADE"),
        _fk("pair_id", "judge_judgements", "book_pairs", "CASCADE"),
        _fk("judge_id", "judge_judgements", "judges", "CASCADE"),
        _fk("run_id", "judge_judgements", "judge_runs", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judge_judgements")),
        sa.UniqueConstraint("pair_id", "judge_id", name=op.f("uq_judge_judgements_pair_id")),
    )
    op.create_index("ix_judge_judgements_book_judge", "judge_judgements", ["book_id", "judge_id"])
    op.create_table(
        "judge_cache",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("rating", sa.Float(), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("raw_reply", sa.Text(), nullable=True),
        _created(),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_judge_cache")),
    )


def downgrade() -> None:
    op.drop_table("judge_cache")
    op.drop_index("ix_judge_judgements_book_judge", table_name="judge_judgements")
    op.drop_table("judge_judgements")
    op.drop_index(op.f("ix_judge_failures_judge_id"), table_name="judge_failures")
    op.drop_table("judge_failures")
    op.drop_index(op.f("ix_judge_runs_judge_id"), table_name="judge_runs")
    op.drop_index("ix_judge_runs_book", table_name="judge_runs")
    op.drop_table("judge_runs")
    op.drop_index(op.f("ix_judge_teams_team_id"), table_name="judge_teams")
    op.drop_table("judge_teams")
    op.drop_index(op.f("ix_judges_owner_id"), table_name="judges")
    op.drop_table("judges")
