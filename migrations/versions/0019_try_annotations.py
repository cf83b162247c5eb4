"""try annotations: every try after a case's first gets its automatic annotation now

Until this revision, the annotation saying what a new try changed was written the first time
a case's timeline was read; since, it is written with the try. This revision writes it for
the tries made before that still have none. The text is worked out here as the app did at
this revision (a migration does not follow later changes to the app's code). The downgrade
leaves the annotations: older code reads them as it would have written them.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_KNOB = 10.0

_tries = sa.table(
    "tries",
    sa.column("case_id", sa.Integer),
    sa.column("number", sa.Integer),
    sa.column("search_endpoint_id", sa.Integer),
    sa.column("query_template", sa.Text),
    sa.column("knobs", sa.JSON),
    sa.column("field_spec", sa.Text),
    sa.column("rows", sa.Integer),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
_annotations = sa.table(
    "annotations",
    sa.column("case_id", sa.Integer),
    sa.column("text", sa.Text),
    sa.column("at", sa.DateTime(timezone=True)),
    sa.column("auto", sa.Boolean),
    sa.column("try_number", sa.Integer),
    sa.column("created_at", sa.DateTime(timezone=True)),
)


def _number(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"


def describe(previous: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """What changed from one try to the next, e.g. "Try 3: titleBoost 10 → 20"."""
    changes = []
    old_knobs, new_knobs = previous["knobs"] or {}, current["knobs"] or {}
    for name in sorted({*old_knobs, *new_knobs}):
        old = old_knobs.get(name, DEFAULT_KNOB)
        new = new_knobs.get(name, DEFAULT_KNOB)
        if float(old) != float(new):
            changes.append(f"{name} {_number(old)} → {_number(new)}")
    if previous["query_template"] != current["query_template"]:
        changes.append("query template changed")
    if previous["rows"] != current["rows"]:
        changes.append(f"rows {previous['rows']} → {current['rows']}")
    if previous["field_spec"] != current["field_spec"]:
        changes.append("field spec changed")
    if previous["search_endpoint_id"] != current["search_endpoint_id"]:
        changes.append(
            f"search endpoint {previous['search_endpoint_id']} → {current['search_endpoint_id']}"
        )
    return f"Try {current['number']}: " + ("; ".join(changes) or "no change in the settings")


def backfill(connection: sa.Connection) -> int:
    """Add the missing automatic annotations; return how many were added."""
    have = {
        (case_id, number)
        for case_id, number in connection.execute(
            sa.select(_annotations.c.case_id, _annotations.c.try_number).where(
                _annotations.c.try_number.is_not(None)
            )
        )
    }
    rows = connection.execute(
        sa.select(_tries).order_by(_tries.c.case_id, _tries.c.number)
    ).mappings()
    now = datetime.now(UTC)
    added: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for current in rows:
        if (
            previous is not None
            and previous["case_id"] == current["case_id"]
            and (current["case_id"], current["number"]) not in have
        ):
            added.append(
                {
                    "case_id": current["case_id"],
                    "text": describe(previous, current),
                    "at": current["created_at"],
                    "auto": True,
                    "try_number": current["number"],
                    "created_at": now,
                }
            )
        previous = dict(current)
    if added:
        connection.execute(sa.insert(_annotations), added)
    return len(added)


def upgrade() -> None:
    backfill(op.get_bind())


def downgrade() -> None:
    pass
