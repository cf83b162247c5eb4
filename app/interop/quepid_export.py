"""Writing a case in Quepid's case export shape, from its current try."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cases import service as case_service
from app.interop.quepid_import_scorer import quepid_shipped
from app.interop.quepid_parse import READ_BATCH, RELEVO_KEY
from app.interop.quepid_parse_scorer import QUEPID_SUFFIX
from app.interop.quepid_parse_try import QUEPID_ENGINE_NAMES
from app.models import Case, Query, Rating, Scorer
from app.scoring.presets import is_builtin_name
from app.scoring.quepid_code import builtin_code
from app.scoring.quepid_scorers import QUEPID_NAMES, ShippedScorer
from app.search import adapter_for
from app.vocabulary import Engine, HttpMethod, ScorerKind


def _json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _same_in_quepid(scorer: Scorer) -> ShippedScorer | None:
    """Return Quepid's shipped scorer when this one is it: its code, run as Quepid runs it."""
    shipped = quepid_shipped(scorer.name)
    if (
        shipped is None
        or scorer.kind != ScorerKind.JAVASCRIPT
        or scorer.environment != "quepid"
        or scorer.code != shipped.code
    ):
        return None
    return shipped


def _name_to_create(scorer: Scorer) -> str:
    """Return a name for the scorer that no scorer Quepid ships has (nor a Relevo built-in)."""
    name = scorer.name.removesuffix(QUEPID_SUFFIX).strip()
    if name.casefold() in QUEPID_NAMES or is_builtin_name(name) or name != scorer.name:
        return f"{name} (Relevo)"
    return name


def quepid_scorer(scorer: Scorer) -> dict[str, Any]:
    """Return the file's "scorer": Quepid's exact name when Quepid's scorer of that name
    computes the same numbers, else a scorer to create in Quepid first, with its code.

    Quepid finds a case's scorer by exact name and refuses the file (400, "needs to be
    migrated over first") when it has none; a name it has but that computes other numbers
    would import and score differently. Quepid reads the name only; the rest is for Relevo
    and for the user.
    """
    shipped = _same_in_quepid(scorer)
    if scorer.kind == ScorerKind.JAVASCRIPT:
        code, top, environment = scorer.code, scorer.max_score, scorer.environment
    else:
        code = builtin_code(scorer.kind, scorer.params, [float(v) for v in scorer.scale])
        top, environment = 100.0, "quepid"
    out: dict[str, Any] = {
        "name": shipped.quepid_name if shipped is not None else _name_to_create(scorer),
        "code": code,
        "scale": [_json_number(v) for v in scorer.scale],
        "max_score": _json_number(top),
        "environment": environment,
    }
    if shipped is None:
        out["quepid_scorer_to_create"] = _to_create(scorer, out["name"])
    return out


def _to_create(scorer: Scorer, name: str) -> str:
    """Return what the user does in Quepid before importing the file."""
    if scorer.kind != ScorerKind.JAVASCRIPT:
        what = (
            f'Relevo\'s built-in "{scorer.name}" ({scorer.kind}) as Relevo computes it, on '
            "0-100; a query Relevo leaves unscored though it has results and ratings (no "
            "relevant rating) scores 0 in Quepid"
        )
    elif scorer.environment == "quepid":
        what = f'the scorer "{scorer.name}", whose code runs unchanged in Quepid'
    else:
        what = (
            f'the scorer "{scorer.name}", written for Relevo\'s environment: in Quepid a '
            "value that is not a number scores 0 instead of an error"
        )
    return (
        f"Quepid has no scorer that gives these numbers. Before importing this file into "
        f'Quepid, create a scorer named "{name}" there with this code and scale: {what}.'
    )


def export_case(session: Session, case: Case) -> Iterator[str]:
    """Yield the case as Quepid's case export JSON (its current try), streamed."""
    current = case_service.current_try(session=session, case=case)
    endpoint = current.search_endpoint
    scorer = case.scorer
    scorer_out = quepid_scorer(scorer)
    engine = Engine(endpoint.engine)
    adapter = adapter_for(engine)
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
                "endpoint_url": adapter.search_url(endpoint.url),
                "search_engine": QUEPID_ENGINE_NAMES[engine],
                "api_method": str(adapter.query_method(HttpMethod(endpoint.method))),
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
