"""Importing a parsed Quepid case: endpoint, scorer, case, queries, ratings, in one go."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.endpoints import service as endpoint_service
from app.errors import Invalid
from app.interop.quepid_import_scorer import (
    check_scale,
    relevo_metrics,
    relevo_scorer,
    scorer_for,
)
from app.interop.quepid_parse import (
    RELEVO_KEY,
    QuepidCase,
    QuepidQuery,
    options_warnings,
    parse_case,
)
from app.interop.quepid_parse_try import REACH_TIMEOUT_S, QuepidEndpoint
from app.interop.quepid_values import MAX_NAME_CHARS, _number, _path, decode
from app.models import Case, Query, Rating, Scorer, SearchEndpoint, Try, User
from app.models.base import utcnow
from app.queries.bulk_lines import from_options
from app.search import adapter_for, extract_knobs


@dataclass
class ImportedCase:
    """What an import made."""

    case: Case
    warnings: list[str]
    queries: int
    ratings: int
    endpoint_created: bool
    scorer_created: bool
    endpoint: SearchEndpoint
    scorer: Scorer
    # Set by `check_endpoint`: None while unchecked or when the engine answered.
    endpoint_problem: str | None = None


async def check_endpoint(imported: ImportedCase) -> ImportedCase:
    """Send one query to the case's endpoint (a short wait) and note why it failed, if it did.

    The import stands either way: an engine that cannot be reached from here (a Quepid
    endpoint on a host only the browser saw, say) is reported, not refused.
    """
    endpoint = imported.endpoint
    adapter = adapter_for(endpoint.engine)
    if adapter.answers_from_file:  # nothing to reach
        imported.endpoint_problem = None
        return imported
    report = await endpoint_service.check_connection(
        endpoint=endpoint,
        query="test",
        template=None,
        field_spec=adapter.test_field_spec,
        timeout_s=REACH_TIMEOUT_S,
    )
    imported.endpoint_problem = None if report.ok else report.message
    return imported


def import_case(*, session: Session, user: User, raw: bytes) -> ImportedCase:
    """Create a case (and, when needed, its endpoint and scorer) from a Quepid case export.

    Everything is written in one transaction: any problem answers 422 and leaves nothing.
    """
    parsed = parse_case(decode(raw))
    warnings = list(parsed.warnings)
    knobs = _checked_knobs(parsed, warnings)
    scorer, scorer_created = _case_scorer(session, user, parsed, warnings)
    check_scale(scorer, parsed)
    metrics = relevo_metrics(session, user, scorer, parsed.relevo)
    endpoint, endpoint_created = _endpoint_for(session, user, parsed.endpoint)
    case = case_service.new_case_with_first_try(
        session=session,
        case=_case_row(user, parsed, scorer, metrics),
        first=_first_try(parsed, endpoint, knobs),
    )
    ratings = _add_queries(session, user, case, parsed.queries, warnings)
    session.flush()
    return ImportedCase(
        case=case,
        warnings=warnings,
        queries=len(parsed.queries),
        ratings=ratings,
        endpoint_created=endpoint_created,
        scorer_created=scorer_created,
        endpoint=endpoint,
        scorer=scorer,
    )


def _checked_knobs(parsed: QuepidCase, warnings: list[str]) -> dict[str, float]:
    """Return the try's knobs once its search settings are checked; 422 naming the try's key."""
    try:
        return case_service.check_search_settings(
            engine=parsed.endpoint.engine,
            template=parsed.query_template,
            field_spec=parsed.field_spec,
            options=parsed.options,
            knobs=_knobs(parsed, warnings),
        )
    except Invalid as exc:
        loc = ("try", "query_params") if "query_template" in exc.loc else ("try", "field_spec")
        raise Invalid(loc, f"Relevo cannot use the try's {_path(loc)}: {exc.message}") from exc


def _case_scorer(
    session: Session, user: User, parsed: QuepidCase, warnings: list[str]
) -> tuple[Scorer, bool]:
    """Return the case's scorer (the built-in Relevo's export names, else the Quepid one)."""
    if parsed.relevo.get("scorer") is not None:  # Relevo's export of a built-in scorer
        return relevo_scorer(
            session, user, parsed.relevo["scorer"], ("options", RELEVO_KEY, "scorer")
        )
    return scorer_for(session, user, parsed, warnings)


def _case_row(
    user: User, parsed: QuepidCase, scorer: Scorer, metrics: tuple[list[int], str]
) -> Case:
    """Return the new case: its name, options, scorer, extra metrics and aggregate."""
    metric_ids, aggregate = metrics
    return Case(
        owner_id=user.id,
        name=parsed.name,
        scorer_id=scorer.id,
        options=parsed.options,
        metric_scorer_ids=metric_ids,
        aggregate=aggregate,
    )


def _first_try(parsed: QuepidCase, endpoint: SearchEndpoint, knobs: dict[str, float]) -> Try:
    """Return the case's first try: the export's template, field spec, rows and knobs."""
    return Try(
        search_endpoint_id=endpoint.id,
        query_template=parsed.query_template,
        field_spec=parsed.field_spec,
        rows=parsed.rows,
        knobs=knobs,
    )


def _knobs(parsed: QuepidCase, warnings: list[str]) -> dict[str, float]:
    """Return the template's knobs with the values of Quepid's curator variables."""
    knobs: dict[str, float] = {}
    for name in extract_knobs(parsed.query_template):
        value = parsed.curator_variables.get(name)
        if value is None:
            continue
        try:
            knobs[name] = _number(value, ("try", "curator_variables", name))
        except Invalid:
            warnings.append(
                f'The curator variable "{name}" is not a number ({value!r}); '
                f"the knob starts at {case_service.DEFAULT_KNOB:g}."
            )
    return knobs


def _endpoint_for(
    session: Session, user: User, wanted: QuepidEndpoint
) -> tuple[SearchEndpoint, bool]:
    """Return the user's endpoint with this engine and URL, else a new one."""
    existing = session.scalar(
        select(SearchEndpoint)
        .where(
            SearchEndpoint.owner_id == user.id,
            SearchEndpoint.engine == wanted.engine,
            SearchEndpoint.url == wanted.url,
            SearchEndpoint.mapper_code.is_(None)
            if wanted.mapper_code is None
            else SearchEndpoint.mapper_code == wanted.mapper_code,
        )
        .order_by(SearchEndpoint.id)
        .limit(1)
    )
    if existing is not None:
        return existing, False
    url, auth = wanted.url, wanted.basic_auth
    title = adapter_for(wanted.engine).label
    endpoint = SearchEndpoint(
        owner_id=user.id,
        name=wanted.name or f"{title} {url}"[:MAX_NAME_CHARS],
        engine=wanted.engine,
        url=url,
        method=wanted.method,
        headers=wanted.headers,
        basic_auth=auth,
        requests_per_minute=wanted.requests_per_minute,
        mapper_code=wanted.mapper_code,
    )
    session.add(endpoint)
    session.flush()
    return endpoint, True


def _add_queries(
    session: Session, user: User, case: Case, queries: list[QuepidQuery], warnings: list[str]
) -> int:
    """Insert the queries in order with their ratings; return the number of ratings.

    Tags and a weight in a query's options become the query's own (those Relevo's export
    carried win); what of them cannot be taken is said in ``warnings``.
    """
    rows: list[Query] = []
    left_out: list[tuple[str, list[str]]] = []
    for position, q in enumerate(queries):
        tags, weight, problems = from_options(q.options)
        if problems and (q.tags is None or q.weight is None):
            left_out.append((q.text, problems))
        rows.append(
            Query(
                case_id=case.id,
                text=q.text,
                position=position,
                notes=q.notes,
                information_need=q.information_need,
                options=q.options,
                tags=q.tags if q.tags is not None else tags,
                weight=q.weight if q.weight is not None else weight,
            )
        )
    warnings.extend(options_warnings(left_out))
    session.add_all(rows)
    session.flush()
    now = utcnow()
    ratings = [
        {
            "query_id": row.id,
            "doc_id": doc,
            "rating": rating,
            "rated_by_id": user.id,
            "updated_at": now,
        }
        for row, q in zip(rows, queries, strict=True)
        for doc, rating in q.ratings.items()
    ]
    if ratings:
        session.execute(insert(Rating), ratings)
    return len(ratings)
