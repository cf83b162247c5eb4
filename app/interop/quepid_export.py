"""Writing a case in Quepid's case export shape, from its current try."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.interop.quepid_import import _shipped
from app.interop.quepid_parse import QUEPID_ENGINE_NAMES, QUEPID_SUFFIX, READ_BATCH
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
        "options": case.options or {},
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
        select(Query.id, Query.text, Query.notes, Query.information_need, Query.options)
        .where(Query.case_id == case.id)
        .order_by(Query.position, Query.id)
    ).all()
    rated = _rated(session, case)
    pending = next(rated, None)
    for position, (query_id, text, notes, need, options) in enumerate(queries, 1):
        ratings: list[dict[str, Any]] = []
        while pending is not None and pending[0] == query_id:
            ratings.append({"doc_id": pending[1], "rating": _json_number(pending[2])})
            pending = next(rated, None)
        yield {
            "arranged_at": position,
            "arranged_next": None,
            "query_text": text,
            "options": options or None,
            "notes": notes,
            "information_need": need,
            "ratings": ratings,
        }
