"""Annotations: notes on a case's timeline, and the automatic one each new try gets."""

from __future__ import annotations

import bisect
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.cases.schemas import AnnotationCreate, AnnotationRead, AnnotationUpdate
from app.db import as_utc
from app.errors import Conflict, Invalid, NotFound
from app.models import Annotation, Case, Run, Try, User

__all__ = [
    "annotate_try",
    "create_annotation",
    "delete_annotation",
    "describe_try",
    "get_annotation",
    "list_annotations",
    "timeline",
    "to_read",
    "update_annotation",
]

DEFAULT_KNOB = 10.0


def _number(value: Any) -> str:
    # Whole numbers in full up to 15 digits; anything else in six significant digits, so
    # that a knob stored as 1e308 (before knobs were bounded) reads "1e+308", not 309 digits.
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else f"{number:g}"


def describe_try(previous: Try, current: Try) -> str:
    """Return what changed from one try to the next, e.g. "Try 3: titleBoost 10 → 20"."""
    changes = []
    for name in sorted({*previous.knobs, *current.knobs}):
        old = previous.knobs.get(name, DEFAULT_KNOB)
        new = current.knobs.get(name, DEFAULT_KNOB)
        if float(old) != float(new):
            changes.append(f"{name} {_number(old)} → {_number(new)}")
    if previous.query_template != current.query_template:
        changes.append("query template changed")
    if previous.rows != current.rows:
        changes.append(f"rows {previous.rows} → {current.rows}")
    if previous.field_spec != current.field_spec:
        changes.append("field spec changed")
    if previous.search_endpoint_id != current.search_endpoint_id:
        changes.append(
            f"search endpoint {previous.search_endpoint_id} → {current.search_endpoint_id}"
        )
    return f"Try {current.number}: " + ("; ".join(changes) or "no change in the settings")


def annotate_try(*, session: Session, case_id: int, previous: Try, current: Try) -> None:
    """Add the automatic annotation of a new try (what changed since the one before it), at
    the moment it was made; the caller's commit saves it with the try."""
    session.add(
        Annotation(
            case_id=case_id,
            text=describe_try(previous, current),
            at=current.created_at,
            auto=True,
            try_number=current.number,
        )
    )


def list_annotations(*, session: Session, case: Case) -> list[Annotation]:
    """Return the case's annotations, the automatic ones included, oldest first."""
    return list(
        session.scalars(
            select(Annotation)
            .where(Annotation.case_id == case.id)
            .order_by(Annotation.at, Annotation.id)
        )
    )


def get_annotation(*, session: Session, case: Case, annotation_id: int) -> Annotation:
    """Return one of the case's annotations, or 404."""
    found = session.get(Annotation, annotation_id) if valid_id(annotation_id) else None
    if found is None or found.case_id != case.id:
        raise NotFound(f"Case {case.id} has no annotation {annotation_id}.")
    return found


def _run_time(session: Session, case: Case, run_id: int) -> datetime:
    run = session.get(Run, run_id)
    if run is None or run.case_id != case.id:
        raise Invalid("run_id", f"Case {case.id} has no run {run_id}.")
    return as_utc(run.finished_at or run.started_at or run.created_at)


def create_annotation(
    *, session: Session, case: Case, user: User, body: AnnotationCreate
) -> Annotation:
    """Add a note at a time, on a run (at its end), or now."""
    at = body.at
    if body.run_id is not None and at is None:
        at = _run_time(session, case, body.run_id)
    elif body.run_id is not None:
        _run_time(session, case, body.run_id)
    annotation = Annotation(
        case_id=case.id,
        text=body.text.strip() or body.text,
        at=as_utc(at or datetime.now(UTC)),
        run_id=body.run_id,
        auto=False,
        created_by_id=user.id,
    )
    session.add(annotation)
    session.flush()
    return annotation


def update_annotation(
    *, session: Session, annotation: Annotation, body: AnnotationUpdate
) -> Annotation:
    """Change a note's text or time."""
    if body.text is not None:
        annotation.text = body.text
    if body.at is not None:
        annotation.at = as_utc(body.at)
    session.flush()
    return annotation


def delete_annotation(*, session: Session, annotation: Annotation) -> None:
    """Delete a note; the automatic note of a try stays (it would come back), 409."""
    if annotation.auto:
        raise Conflict("An automatic annotation describes a try and cannot be deleted; edit it.")
    session.delete(annotation)
    session.flush()


def to_read(annotation: Annotation, near_run_id: int | None = None) -> AnnotationRead:
    """Return the API view of an annotation."""
    return AnnotationRead(
        id=annotation.id,
        case_id=annotation.case_id,
        text=annotation.text,
        at=as_utc(annotation.at),
        run_id=annotation.run_id,
        auto=annotation.auto,
        agent=annotation.agent,
        near_run_id=near_run_id if annotation.run_id is None else annotation.run_id,
    )


def timeline(*, session: Session, case: Case) -> list[AnnotationRead]:
    """Return the case's annotations, each placed on the run its marker sits on."""
    notes = list_annotations(session=session, case=case)
    ended = [
        (as_utc(at), run_id)
        for run_id, at in session.execute(
            select(Run.id, Run.finished_at)
            .where(Run.case_id == case.id, Run.finished_at.is_not(None))
            .order_by(Run.finished_at, Run.id)
        )
        if at is not None
    ]
    moments = [at for at, _ in ended]
    reads = []
    for note in notes:
        index = bisect.bisect_left(moments, as_utc(note.at))
        reads.append(to_read(note, ended[index][1] if index < len(ended) else None))
    return reads
