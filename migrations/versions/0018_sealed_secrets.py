"""sealed secrets: search endpoints' header values and basic auth encrypted at rest

Values stored in plaintext before this revision are sealed with the newest key
(app/secret_box/); the columns keep their types (headers stays a JSON object whose values
are sealed strings, so the header names stay readable). The downgrade stores plaintext
again, for code that cannot read sealed values.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

from app.secret_box import SealedColumn, reseal_column

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here (not taken from the registry): this revision concerns these two only.
_COLUMNS = (
    SealedColumn("search_endpoints", "headers", kind="json_values"),
    SealedColumn("search_endpoints", "basic_auth"),
)


def upgrade() -> None:
    connection = op.get_bind()
    for spec in _COLUMNS:
        reseal_column(connection, spec, mode="seal_plaintext")


def downgrade() -> None:
    connection = op.get_bind()
    for spec in _COLUMNS:
        # A value no configured key opens stays sealed (and is useless to older code).
        reseal_column(connection, spec, mode="unseal")
