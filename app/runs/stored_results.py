"""Reading what a finished run stored: a query's row, its ranking, its docs' display text.

Of the domains it reads only the cases core (a run's try), so that the run pipeline, the
pages and the comparison can all read stored rankings the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases.tries import get_try
from app.models import Case, Query, Run, RunQuery, Try
from app.search import FieldSpec, FieldSpecError, parse_field_spec
from app.vocabulary import QueryStatus

__all__ = [
    "doc_title",
    "engine_answered",
    "field_spec_of",
    "has_ranking",
    "latest_row",
    "shown_text",
    "spec_of",
]


def latest_row(*, session: Session, run: Run | None, query: Query) -> RunQuery | None:
    """Return the query's row in the (latest finished) run; None without a run or a row."""
    if run is None:
        return None
    stmt = select(RunQuery).where(RunQuery.run_id == run.id, RunQuery.query_id == query.id)
    return session.scalar(stmt)


def engine_answered(*, status: QueryStatus, num_found: int | None, ranked: bool) -> bool:
    """Return whether the engine answered a query: a fetch error (an error with no hit count
    and nothing ranked) leaves nothing to score."""
    return not (status == QueryStatus.ERROR and num_found is None and not ranked)


def has_ranking(row: RunQuery) -> bool:
    """Return whether the engine answered this stored query (see engine_answered)."""
    return engine_answered(status=row.status, num_found=row.num_found, ranked=bool(row.docs))


def field_spec_of(*, session: Session, case: Case, run: Run) -> FieldSpec:
    """Return the field spec the run's try displayed docs with (empty if it no longer parses)."""
    return spec_of(get_try(session=session, case=case, number=run.try_number))


def spec_of(chosen: Try) -> FieldSpec:
    """Return a try's field spec (empty if it no longer parses)."""
    try:
        return parse_field_spec(chosen.field_spec)
    except FieldSpecError:
        return FieldSpec()


def doc_title(doc: Mapping[str, Any], spec: FieldSpec) -> str | None:
    """Return the stored doc's title as text, or None when the spec or the doc has none."""
    fields: Mapping[str, Any] = doc.get("fields") or {}
    title = fields.get(spec.title_field) if spec.title_field else None
    return None if title is None else shown_text(title)


def shown_text(value: Any) -> str:
    """Return a stored field value as display text: lists joined, objects as JSON."""
    if isinstance(value, list):
        return ", ".join(shown_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def effective_knobs(
    *, session: Session, case_id: int, runs: Sequence[Run]
) -> dict[int, dict[str, Any]]:
    """Return the knob values each run searched with, by run id: its own (a sweep's), else
    its try's, so that two runs can be told apart by what they tried."""
    numbers = {r.try_number for r in runs if not r.knobs}
    tries: dict[int, dict[str, Any]] = {}
    if numbers:
        stmt = select(Try.number, Try.knobs).where(Try.case_id == case_id, Try.number.in_(numbers))
        tries = {number: knobs or {} for number, knobs in session.execute(stmt)}
    return {r.id: dict(r.knobs or tries.get(r.try_number) or {}) for r in runs}
