"""Cases and their tries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

# Another user's id answers 404 like a missing one, in bodies as in paths.
from app import access
from app.access import visible_cases, visible_endpoint, visible_scorer
from app.cases import notes
from app.cases.case_runs import case_run
from app.cases.schemas import CaseCreate, CaseRead, CaseUpdate
from app.cases.totals import refresh_case_totals
from app.cases.tries import get_try
from app.errors import Invalid
from app.models import Case, Query, Run, Try, User
from app.scorers import service as scorer_service
from app.search import (
    FieldSpecError,
    TemplateError,
    extract_knobs,
    parse_field_spec,
    validate_template,
)
from app.teams import service as teams
from app.vocabulary import Engine

DEFAULT_KNOB = 10.0
TRY_FIELDS = ("search_endpoint_id", "query_template", "field_spec", "rows", "knobs")


@dataclass(frozen=True)
class CaseStats:
    query_count: int
    last_score: float | None
    last_run_at: datetime | None


def current_try(*, session: Session, case: Case) -> Try:
    """Return the try a case runs with now."""
    return get_try(session=session, case=case, number=case.current_try_number)


def list_tries(*, session: Session, case: Case) -> list[Try]:
    """Return the case's tries, newest first."""
    stmt = select(Try).where(Try.case_id == case.id).order_by(Try.number.desc())
    return list(session.scalars(stmt))


def new_case_with_first_try(*, session: Session, case: Case, first: Try) -> Case:
    """Add a case and its try number 1 (the case's current try); flushed, not committed."""
    case.current_try_number = 1
    session.add(case)
    session.flush()
    first.case_id = case.id
    first.number = 1
    session.add(first)
    return case


def create_case(*, session: Session, user: User, body: CaseCreate) -> Case:
    """Check the settings, then create the case with its first try."""
    endpoint = visible_endpoint(session=session, user=user, endpoint_id=body.search_endpoint_id)
    scorer = (
        visible_scorer(session=session, user=user, scorer_id=body.scorer_id)
        if body.scorer_id is not None
        else scorer_service.default_scorer(session=session)
    )
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    knobs = check_search_settings(
        engine=endpoint.engine,
        template=body.query_template,
        field_spec=body.field_spec,
        options=body.options,
        knobs=body.knobs,
    )
    case = new_case_with_first_try(
        session=session,
        case=Case(
            owner_id=user.id,
            name=body.name,
            scorer_id=scorer.id,
            options=body.options,
            metric_scorer_ids=metric_scorers(
                session=session, user=user, primary_id=scorer.id, ids=body.metric_scorer_ids
            ),
            aggregate=body.aggregate,
            teams=shared,
        ),
        first=Try(
            search_endpoint_id=endpoint.id,
            query_template=body.query_template,
            field_spec=body.field_spec,
            rows=body.rows,
            knobs=knobs,
        ),
    )
    session.flush()
    return case


def apply_settings(*, session: Session, user: User, case: Case, body: CaseUpdate) -> Case:
    """Check every setting changed, then apply them; new search settings start a new try.

    Only the case and its tries: sharing, the schedule and re-scoring are cases.flows'.
    Flushed, not committed: the caller ends the unit of work.

    Nothing is changed when any check fails, and every failed check is reported at once.
    """
    changes = body.model_dump(exclude_unset=True, exclude_none=True, exclude={"team_ids"})
    scorer_id = case.scorer_id
    if "scorer_id" in changes:
        scorer_id = visible_scorer(session=session, user=user, scorer_id=changes["scorer_id"]).id
    options = changes.get("options", case.options)
    latest = current_try(session=session, case=case)
    settings: dict[str, Any] = {name: getattr(latest, name) for name in TRY_FIELDS}
    wanted = {**settings, **{k: v for k, v in changes.items() if k in TRY_FIELDS}}
    endpoint = visible_endpoint(
        session=session, user=user, endpoint_id=wanted["search_endpoint_id"]
    )
    wanted["knobs"] = check_search_settings(
        engine=endpoint.engine,
        template=wanted["query_template"],
        field_spec=wanted["field_spec"],
        options=options,
        knobs=wanted["knobs"],
    )
    if "name" in changes:
        case.name = changes["name"]
    if "metric_scorer_ids" in changes or "scorer_id" in changes:
        case.metric_scorer_ids = metric_scorers(
            session=session,
            user=user,
            primary_id=scorer_id,
            ids=changes.get("metric_scorer_ids", case.metric_scorer_ids or []),
        )
    if changes.get("aggregate", case.aggregate) != case.aggregate:
        case.aggregate = changes["aggregate"]
        # In this transaction: the badge (a stored total) never lags the metric panel.
        refresh_case_totals(session=session, case_id=case.id)
    case.scorer_id = scorer_id
    case.options = options
    if wanted != settings:
        previous = latest_try(session=session, case=case)
        new_try = Try(case_id=case.id, number=previous.number + 1, **wanted)
        session.add(new_try)
        session.flush()
        # The timeline says what the new try changed.
        notes.annotate_try(session=session, case_id=case.id, previous=previous, current=new_try)
        case.current_try_number = new_try.number
    # Flushed, not committed: the caller's re-score of the latest run (cases.flows, or a
    # sweep's Apply) is part of the same unit of work, so a metric set, scorer or aggregate
    # is never stored without the scores it gives.
    session.flush()
    return case


def metric_scorers(
    *, session: Session, user: User, primary_id: int, ids: Sequence[int]
) -> list[int]:
    """Return the extra metric scorer ids, each visible to the user (else 404), repeats and
    the primary scorer dropped (it is always the first metric)."""
    result: list[int] = []
    for scorer_id in ids:
        if scorer_id == primary_id or scorer_id in result:
            continue
        result.append(visible_scorer(session=session, user=user, scorer_id=scorer_id).id)
    return result


def latest_try(*, session: Session, case: Case) -> Try:
    """Return the case's try with the highest number (a case always has its try 1)."""
    found = session.scalar(
        select(Try).where(Try.case_id == case.id).order_by(Try.number.desc()).limit(1)
    )
    assert found is not None  # made with the case, deleted only with it
    return found


def check_search_settings(
    *,
    engine: Engine,
    template: str,
    field_spec: str,
    options: Mapping[str, Any],
    knobs: Mapping[str, float],
) -> dict[str, float]:
    """Reject a template or field spec that cannot work (both checked, both reported);
    return the knobs the template uses."""
    problems: list[tuple[str | tuple[str | int, ...], str]] = []
    try:
        parse_field_spec(field_spec)
    except FieldSpecError as exc:
        problems.append(("field_spec", str(exc)))
    try:
        validate_template(engine, template, case_options=options)
    except TemplateError as exc:
        problems.append(("query_template", str(exc)))
    if problems:
        raise Invalid.collected(problems)
    return {name: float(knobs.get(name, DEFAULT_KNOB)) for name in extract_knobs(template)}


def delete_case(*, session: Session, user: User, case: Case) -> None:
    """Delete (its owner only) the case with its tries, queries, ratings and runs."""
    access.require_owner(user=user, obj=case, action="delete it")
    session.delete(case)
    session.flush()


def case_stats(*, session: Session, case_ids: list[int]) -> dict[int, CaseStats]:
    """Return query counts and the latest finished run's score for each case."""
    if not case_ids:
        return {}
    counts = dict(
        session.execute(
            select(Query.case_id, func.count())
            .where(Query.case_id.in_(case_ids))
            .group_by(Query.case_id)
        ).all()
    )
    latest_ids = (
        select(func.max(Run.id)).where(Run.case_id.in_(case_ids), case_run()).group_by(Run.case_id)
    )
    latest = {
        run.case_id: run for run in session.scalars(select(Run).where(Run.id.in_(latest_ids)))
    }
    return {
        case_id: CaseStats(
            query_count=counts.get(case_id, 0),
            last_score=latest[case_id].case_score if case_id in latest else None,
            last_run_at=latest[case_id].finished_at if case_id in latest else None,
        )
        for case_id in case_ids
    }


def to_read(
    *, session: Session, case: Case, stats: CaseStats | None = None, current: Try | None = None
) -> CaseRead:
    """Return the API view of a case with its current try's settings."""
    current = current or current_try(session=session, case=case)
    stats = stats or case_stats(session=session, case_ids=[case.id])[case.id]
    return CaseRead(
        id=case.id,
        name=case.name,
        search_endpoint_id=current.search_endpoint_id,
        scorer_id=case.scorer_id,
        query_template=current.query_template,
        field_spec=current.field_spec,
        rows=current.rows,
        options=case.options,
        knobs=current.knobs,
        try_number=case.current_try_number,
        query_count=stats.query_count,
        last_score=stats.last_score,
        last_run_at=stats.last_run_at,
        team_ids=teams.team_ids(case),
        metric_scorer_ids=list(case.metric_scorer_ids or []),
        aggregate="weighted_mean" if case.aggregate == "weighted_mean" else "mean",
    )


def list_reads(*, session: Session, user: User) -> list[CaseRead]:
    """Return the API views of all the user's cases."""
    cases = visible_cases(session=session, user=user)
    stats = case_stats(session=session, case_ids=[c.id for c in cases])
    current = {
        t.case_id: t
        for t in session.scalars(
            select(Try)
            .join(Case, (Case.id == Try.case_id) & (Case.current_try_number == Try.number))
            .where(Case.id.in_([c.id for c in cases]))
        )
    }
    return [
        to_read(session=session, case=c, stats=stats[c.id], current=current[c.id]) for c in cases
    ]
