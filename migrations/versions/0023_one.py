"""A run in which every query errored is "failed", as API.md says

Until this revision such a run ended "finished" with no score (only the pages showed it
as failed), so a run_failed alert or an API client reading the status missed it. This
revision gives the runs stored that way the status and error message a run ending now gets;
their rows, counts and recorded scores stay as they are. The downgrade puts "finished" back
on the runs that carry this revision's message.

Revision ID: 0023_one
Revises: 0022_fidscore
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_one"
down_revision: str | None = "0022_fidscore"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app.runs.store writes it at this revision.
MESSAGE = "Every query errored: the run has no score."

_runs = sa.table(
    "runs",
    sa.column("status", sa.String),
    sa.column("error", sa.Text),
    sa.column("errors", sa.Integer),
    sa.column("total", sa.Integer),
    sa.column("done", sa.Integer),
    sa.column("scored", sa.Integer),
    sa.column("unscored", sa.Integer),
)


def marking_failed() -> sa.Update:
    """Return the UPDATE that gives every stored all-errored "finished" run its ending."""
    return (
        _runs.update()
        .where(
            _runs.c.status == "finished",
            _runs.c.errors > 0,
            _runs.c.scored == 0,
            _runs.c.unscored == 0,
        )
        .values(status="failed", error=sa.func.coalesce(_runs.c.error, MESSAGE))
    )


def upgrade() -> None:
    op.execute(marking_failed())


def downgrade() -> None:
    op.execute(
        _runs.update()
        .where(_runs.c.status == "failed", _runs.c.error == MESSAGE)
        .values(status="finished", error=None)
    )
