"""Writing a case in Quepid's case export shape, from its current try."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.interop.quepid_import import _shipped
from app.interop.quepid_parse import QUEPID_ENGINE_NAMES, QUEPID_SUFFIX, READ_BATCH, RELEVO_KEY
from app.models import Case, Query, Rating, Scorer
from app.vocabulary import Engine, ScorerKind


def _json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _quepid_name_of(scorer: Scorer) -> str:
    """Return the scorer's name for Quepid: Quepid's own name for its shipped scorers."""
    shipped = _shipped(scorer.name) if scorer.name.endswith(QUEPID_SUFFIX) else None
    if shipped is not None and scorer.code == shipped.code:
        return shipped.name
    return scorer.name


def export_case(session: Session, case: Case) -> Iterator[str]:
    """Yield the case as Quepid's case export JSON (its current try), streamed."""
    current = case_service.current_try(session=session, case=case)
    endpoint = current.search_endpoint
    scorer = case.scorer
    scorer_out: dict[str, Any] = {"name": _quepid_name_of(scorer)}
    if scorer.kind == ScorerKind.JAVASCRIPT:
        # Quepid's own exports name the scorer only; the code and scale make the file whole.
        scorer_out["code"] = scorer.code
        scorer_out["scale"] = [_json_number(v) for v in scorer.scale]
        scorer_out["max_score"] = _json_number(scorer.max_score)
        scorer_out["environment"] = scorer.environment
    engine = Engine(endpoint.engine)
    url = endpoint.url if engine == Engine.SOLR else endpoint.url.rstrip("/") + "/_search"
    head: dict[str, Any] = {
        "case_name": case.name,
        "owner_email": case.owner.email,
        "public": False,
        "archived": False,
        "options": _case_options(session, case),
        "scorer": scorer_out,
        "try": {
            "escape_query": False,  # Relevo sends the query text as it is
            "field_spec": current.field_spec,
            "name": f"Try {current.number}",
            "number_of_rows": current.rows,
            "query_params": current.query_template,
            "curator_variables": [
                {"name": name, "value": _json_number(value)}
                for name, value in current.knobs.items()
            ],
            "search_endpoint": {
                "name": endpoint.name,
                "endpoint_url": url,
                "search_engine": QUEPID_ENGINE_NAMES[engine],
                "api_method": "POST" if engine != Engine.SOLR else str(endpoint.method),
                # Headers and basic auth are secrets: never written out.
                "custom_headers": None,
                "basic_auth_credential": None,
                "requests_per_minute": endpoint.requests_per_minute,
                **({"mapper_code": endpoint.mapper_code} if endpoint.mapper_code else {}),
            },
        },
    }
    opening = json.dumps(head, ensure_ascii=False)[:-1]
    yield opening + ', "queries": ['
    for n, item in enumerate(_export_queries(session, case)):
        yield (", " if n else "") + json.dumps(item, ensure_ascii=False)
    yield "]}"


def scorer_spec(scorer: Scorer) -> dict[str, Any]:
    """Return what recreates a scorer: its name, kind and whole config."""
    spec: dict[str, Any] = {
        "name": scorer.name,
        "kind": str(scorer.kind),
        "params": dict(scorer.params or {}),
        "scale": [_json_number(v) for v in scorer.scale],
        "scale_labels": scorer.scale_labels,
        "max_score": _json_number(scorer.max_score),
    }
    if scorer.kind == ScorerKind.JAVASCRIPT:
        spec["code"] = scorer.code
        spec["environment"] = scorer.environment
    return spec


def _case_options(session: Session, case: Case) -> dict[str, Any]:
    """Return the case's options plus, under "relevo", what Quepid's case has no place for:
    a built-in scorer's kind and parameters (the file's scorer is a name only), the extra
    metrics and a weighted aggregate."""
    extras: dict[str, Any] = {}
    if case.scorer.kind != ScorerKind.JAVASCRIPT:
        extras["scorer"] = scorer_spec(case.scorer)
    metric_ids = [i for i in case.metric_scorer_ids or [] if i != case.scorer_id]
    if metric_ids:
        found = {s.id: s for s in session.scalars(select(Scorer).where(Scorer.id.in_(metric_ids)))}
        extras["metrics"] = [scorer_spec(found[i]) for i in metric_ids if i in found]
    if case.aggregate != "mean":
        extras["aggregate"] = case.aggregate
    options = {k: v for k, v in (case.options or {}).items() if k != RELEVO_KEY}
    return {**options, RELEVO_KEY: extras} if extras else options


def _query_options(options: dict[str, Any] | None, tags: list[Any], weight: float) -> Any:
    """Return a query's options plus its tags and weight under "relevo" (None when empty)."""
    extras: dict[str, Any] = {}
    if tags:
        extras["tags"] = list(tags)
    if weight != 1.0:
        extras["weight"] = _json_number(weight)
    merged = {k: v for k, v in (options or {}).items() if k != RELEVO_KEY}
    if extras:
        merged[RELEVO_KEY] = extras
    return merged or None


def _rated(session: Session, case: Case) -> Iterator[tuple[int, str, float]]:
    """Yield (query id, doc id, rating) in query then doc order, streamed."""
    stmt = (
        select(Rating.query_id, Rating.doc_id, Rating.rating)
        .join(Query, Rating.query_id == Query.id)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id, Rating.doc_id)
        .execution_options(yield_per=READ_BATCH)
    )
    for row in session.execute(stmt):
        yield row[0], row[1], row[2]


def _export_queries(session: Session, case: Case) -> Iterator[dict[str, Any]]:
    queries = session.execute(
        select(
            Query.id,
            Query.text,
            Query.notes,
            Query.information_need,
            Query.options,
            Query.tags,
            Query.weight,
        )
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id)
    ).all()
    rated = _rated(session, case)
    pending = next(rated, None)
    for position, (query_id, text, notes, need, options, tags, weight) in enumerate(queries, 1):
        ratings: list[dict[str, Any]] = []
        while pending is not None and pending[0] == query_id:
            ratings.append({"doc_id": pending[1], "rating": _json_number(pending[2])})
            pending = next(rated, None)
        yield {
            "arranged_at": position,
            "arranged_next": None,
            "query_text": text,
            "options": _query_options(options, tags or [], weight),
            "notes": notes,
            "information_need": need,
            "ratings": ratings,
        }
