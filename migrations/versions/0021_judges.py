"""judges: a cache scoped to its owner, one active run per judge, reservations of calls

The judge cache was keyed by (model, prompt, pair, scale) only, so one user's answers were
served to another user's judge; its key now also hashes the judge's owner, provider and base
URL, and each entry names its owner. Entries made before cannot say who produced them: they
are dropped (a cache only spares money; nothing else refers to it).

At most one judge run per judge is queued or running: a partial unique index. Runs that
broke that rule before (concurrent starts) keep the oldest under way; the others are paused
with a message, to be resumed when it ends.

``reserved_*``: the worst case of the calls a run has under way, written before each call.

Revision ID: 0021_judges
Revises: 0020_secrets
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_judges"
down_revision: str | None = "0020_secrets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACTIVE_WHERE = "status IN ('queued', 'running')"
PAUSED_MESSAGE = "Paused: another run of this judge was under way; resume it when that one ends."


def _cache_table(*, with_owner: bool) -> None:
    columns: list[sa.Column[object] | sa.Constraint] = [
        sa.Column("key", sa.String(length=64), nullable=False)
    ]
    if with_owner:
        columns.append(sa.Column("owner_id", sa.Integer(), nullable=False))
    columns += [
        sa.Column("rating", sa.Float(), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("tokens_in", sa.Integer(), nullable=False),
        sa.Column("tokens_out", sa.Integer(), nullable=False),
        sa.Column("raw_reply", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_judge_cache")),
    ]
    if with_owner:
        columns.append(
            sa.ForeignKeyConstraint(
                ["owner_id"],
                ["users.id"],
                name=op.f("fk_judge_cache_owner_id_users"),
                ondelete="CASCADE",
            )
        )
    op.create_table("judge_cache", *columns)
    if with_owner:
        op.create_index(op.f("ix_judge_cache_owner_id"), "judge_cache", ["owner_id"])


def upgrade() -> None:
    op.drop_table("judge_cache")
    _cache_table(with_owner=True)
    runs = sa.table(
        "judge_runs",
        sa.column("id", sa.Integer),
        sa.column("judge_id", sa.Integer),
        sa.column("status", sa.String),
        sa.column("message", sa.Text),
    )
    connection = op.get_bind()
    active = connection.execute(
        sa.select(runs.c.id, runs.c.judge_id)
        .where(runs.c.status.in_(("queued", "running")))
        .order_by(runs.c.judge_id, runs.c.id)
    ).all()
    kept: set[int] = set()
    extra = []
    for run_id, judge_id in active:
        if judge_id in kept:
            extra.append(run_id)
        kept.add(judge_id)
    if extra:
        connection.execute(
            sa.update(runs)
            .where(runs.c.id.in_(extra))
            .values(status="paused", message=PAUSED_MESSAGE)
        )
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reserved_usd", sa.Float(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("reserved_tokens_in", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("reserved_tokens_out", sa.Integer(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        for name in ("reserved_usd", "reserved_tokens_in", "reserved_tokens_out"):
            batch_op.alter_column(name, server_default=None)
    op.create_index(
        "uq_judge_runs_one_active",
        "judge_runs",
        ["judge_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE_WHERE),
        postgresql_where=sa.text(ACTIVE_WHERE),
    )


def downgrade() -> None:
    op.drop_index(
        "uq_judge_runs_one_active",
        table_name="judge_runs",
        sqlite_where=sa.text(ACTIVE_WHERE),
        postgresql_where=sa.text(ACTIVE_WHERE),
    )
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.drop_column("reserved_tokens_out")
        batch_op.drop_column("reserved_tokens_in")
        batch_op.drop_column("reserved_usd")
    op.drop_index(op.f("ix_judge_cache_owner_id"), table_name="judge_cache")
    op.drop_table("judge_cache")
    _cache_table(with_owner=False)
