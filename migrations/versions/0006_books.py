"""books, their query-doc pairs, raters and judgements, and the book behind a case's ratings

Revision ID: 0006
Revises: 0001
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "books",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column(
            "scale",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "scale_labels",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_books_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_books")),
    )
    with op.batch_alter_table("books", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_books_owner_id"), ["owner_id"], unique=False)

    op.create_table(
        "book_pairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("query_text", sa.String(length=1000), nullable=False),
        sa.Column("doc_id", sa.String(length=500), nullable=False),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column(
            "fields",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("information_need", sa.Text(), nullable=True),
        sa.Column("judgement_count", sa.Integer(), nullable=False),
        sa.Column("rater_bits", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["book_id"], ["books.id"], name=op.f("fk_book_pairs_book_id_books"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_book_pairs")),
        sa.UniqueConstraint("book_id", "query_text", "doc_id", name=op.f("uq_book_pairs_book_id")),
    )
    with op.batch_alter_table("book_pairs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_book_pairs_book_count",
            ["book_id", "judgement_count", "id", "rater_bits"],
            unique=False,
        )

    op.create_table(
        "book_raters",
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["book_id"], ["books.id"], name=op.f("fk_book_raters_book_id_books"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_book_raters_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("book_id", "user_id", name=op.f("pk_book_raters")),
        sa.UniqueConstraint("book_id", "slot", name=op.f("uq_book_raters_book_id")),
    )
    with op.batch_alter_table("book_raters", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_book_raters_user_id"), ["user_id"], unique=False)

    op.create_table(
        "case_book_syncs",
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=10), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=True),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["book_id"],
            ["books.id"],
            name=op.f("fk_case_book_syncs_book_id_books"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["case_id"],
            ["cases.id"],
            name=op.f("fk_case_book_syncs_case_id_cases"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rater_id"],
            ["users.id"],
            name=op.f("fk_case_book_syncs_rater_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("case_id", name=op.f("pk_case_book_syncs")),
    )
    with op.batch_alter_table("case_book_syncs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_case_book_syncs_book_id"), ["book_id"], unique=False)

    op.create_table(
        "judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("book_id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=True),
        sa.Column("unrateable", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["book_id"], ["books.id"], name=op.f("fk_judgements_book_id_books"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["pair_id"],
            ["book_pairs.id"],
            name=op.f("fk_judgements_pair_id_book_pairs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_judgements_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judgements")),
        sa.UniqueConstraint("pair_id", "user_id", name=op.f("uq_judgements_pair_id")),
    )
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.create_index(
            "ix_judgements_book_user", ["book_id", "user_id", "updated_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_index("ix_judgements_book_user")

    op.drop_table("judgements")
    with op.batch_alter_table("case_book_syncs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_case_book_syncs_book_id"))

    op.drop_table("case_book_syncs")
    with op.batch_alter_table("book_raters", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_book_raters_user_id"))

    op.drop_table("book_raters")
    with op.batch_alter_table("book_pairs", schema=None) as batch_op:
        batch_op.drop_index("ix_book_pairs_book_count")

    op.drop_table("book_pairs")
    with op.batch_alter_table("books", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_books_owner_id"))

    op.drop_table("books")
