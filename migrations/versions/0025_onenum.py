"""The aggregate a run's recorded scores were averaged with when it finished

``runs.recorded_aggregate`` is the case's aggregate ("mean" or "weighted_mean") at the
moment the run finished, stored with ``recorded_score`` and ``recorded_metrics`` and, like
them, never changed afterwards. Runs stored before this revision keep null: which mean they
used was not recorded, and the case's aggregate may have changed since.

Revision ID: 0025_onenum
Revises: 0024_clicks
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_onenum"
down_revision: str | None = "0024_clicks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("recorded_aggregate", sa.String(length=20), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "recorded_aggregate")
