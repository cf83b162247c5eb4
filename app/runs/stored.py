"""Reading what a finished run stored: a query's row, its ranking, its docs' display text.

A leaf of the services: of the other page and run modules it imports only
app.runs.case_data, so that the run pipeline, the pages and the comparison can all read
stored rankings the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from app.models import Case, Query, Run, RunQuery, Try
from app.runs import case_data
from app.search import FieldSpec, FieldSpecError, parse_field_spec
from app.vocabulary import QueryStatus, RunStatus

__all__ = [
    "case_run",
    "doc_title",
    "engine_answered",
    "field_spec_of",
    "has_ranking",
    "has_results",
    "is_of_case",
    "latest_row",
    "of_case",
    "shown_text",
    "spec_of",
]


def has_results() -> Any:
    """Return the condition of a run that stored every query's outcome: finished, or failed
    because every query errored (its errors are its results; a run that failed as a whole,
    before any query, has none).

    The case's latest such run is the one its pages show, so a run where every query
    errored shows no score and its errors rather than the run before it.
    """
    return or_(
        Run.status == RunStatus.FINISHED, and_(Run.status == RunStatus.FAILED, Run.errors > 0)
    )


def of_case() -> Any:
    """Return the condition of a run that is the case's own: not a combination of a knob
    sweep (whatever its status; ``is_of_case`` is the same test on a loaded run).

    A sweep's combinations search with knobs the case does not have (until one is applied,
    which adds a run of its own): they stay in the history, but the case's latest run (its
    badge, the cases list, the dashboard, the run a rating re-scores) and its alerts (their
    evaluation, the run they compare with) never come from them. Nor from a draft (an agent's
    proposed try, ``Run.query_template``), which searched with a template the case does not
    have.
    """
    return and_(Run.sweep_id.is_(None), Run.query_template.is_(None))


def is_of_case(run: Run) -> bool:
    """Return whether a loaded run is the case's own (``of_case``)."""
    return run.sweep_id is None and run.query_template is None


def case_run() -> Any:
    """Return the condition of a run that speaks for the case as it is set: one with results
    (``has_results``) of the case's own (``of_case``)."""
    return and_(has_results(), of_case())


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
    return spec_of(case_data.get_try(session=session, case=case, number=run.try_number))


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
