"""Docs rated for a query that its latest run did not return, fetched by id from the engine.

Planning reads the database (synchronously); fetching asks the engine once per query and
never raises for engine problems: their message is shown in place of the docs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy.orm import Session

from app.cases.tries import get_try
from app.endpoints import service as endpoint_service
from app.models import Case, Query
from app.outbound.transport import engine_http_client
from app.queries import service as query_service
from app.queries.pages.results import result_doc
from app.queries.pages.schemas import RatedMissing, ResultDoc
from app.runs import service as run_service
from app.runs.stored_results import latest_row, spec_of
from app.scorers import service as scorer_service
from app.search import MAX_LOOKUP_IDS, EndpointConfig, FieldSpec, SearchClient, SearchError

__all__ = ["MissingLookup", "fetch_rated_missing", "missing_ids", "plan_rated_missing"]


@dataclass(frozen=True)
class MissingLookup:
    """What to fetch for one query: the ids, where from, and how to show them."""

    base: RatedMissing
    ids: list[str] = field(default_factory=list)
    endpoint: EndpointConfig | None = None
    field_spec: str = ""
    spec: FieldSpec = field(default_factory=FieldSpec)
    ratings: Mapping[str, float] = field(default_factory=dict)
    raters: Mapping[str, str | None] = field(default_factory=dict)


def missing_ids(ratings: Mapping[str, float], docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the rated doc ids not among ``docs``, highest rating first, then by id."""
    returned = {str(d.get("id")) for d in docs}
    return sorted((d for d in ratings if d not in returned), key=lambda d: (-ratings[d], d))


def plan_rated_missing(*, session: Session, case: Case, query: Query) -> MissingLookup:
    """Return the lookup of the query's rated docs that its latest finished run did not return."""
    scale = scorer_service.scale_entries(case.scorer)
    run = run_service.latest_finished_run(session=session, case=case)
    row = latest_row(session=session, run=run, query=query)
    rated = query_service.ratings_with_raters(session=session, query=query)
    ratings = {rating.doc_id: rating.rating for rating, _user_id, _email in rated}
    ids = missing_ids(ratings, (row.docs or []) if row is not None else [])
    base = RatedMissing(
        case_id=case.id,
        query_id=query.id,
        run_id=None if run is None else run.id,
        total=len(ids) if row is not None else 0,
        docs=[],
        not_found=[],
        not_fetched=max(0, len(ids) - MAX_LOOKUP_IDS),
        error=None,
        scale=scale,
    )
    if run is None or row is None or not ids:
        return MissingLookup(base=base)
    chosen = get_try(session=session, case=case, number=run.try_number)
    raters = {rating.doc_id: email for rating, _user_id, email in rated}
    return MissingLookup(
        base=base,
        ids=ids[:MAX_LOOKUP_IDS],
        endpoint=endpoint_service.engine_config(chosen.search_endpoint),
        field_spec=chosen.field_spec,
        spec=spec_of(chosen),
        ratings=ratings,
        raters=raters,
    )


async def fetch_rated_missing(
    lookup: MissingLookup, *, http: httpx.AsyncClient | None = None
) -> RatedMissing:
    """Return the planned docs fetched from the engine; an engine problem becomes ``error``."""
    if lookup.endpoint is None or not lookup.ids:
        return lookup.base
    try:
        async with contextlib.AsyncExitStack() as stack:
            client = http
            if client is None:
                client = await stack.enter_async_context(engine_http_client())
            result = await SearchClient(client, attempts=2).fetch_ids(
                lookup.endpoint, lookup.ids, lookup.field_spec
            )
    except SearchError as exc:
        return lookup.base.model_copy(update={"error": _short(exc.message)})
    found = {doc.id: doc for doc in result.docs}
    docs = [
        _shown(
            result_doc(
                {"id": d, "rank": 0, "fields": found[d].fields}, lookup.spec, lookup.ratings
            ),
            lookup,
        )
        for d in lookup.ids
        if d in found
    ]
    not_found = [
        _shown(
            ResultDoc(id=d, rank=0, title=None, fields=[], images=[], rating=lookup.ratings[d]),
            lookup,
        )
        for d in lookup.ids
        if d not in found
    ]
    return lookup.base.model_copy(update={"docs": docs, "not_found": not_found})


def _shown(doc: ResultDoc, lookup: MissingLookup) -> ResultDoc:
    on_scale = {entry.value for entry in lookup.base.scale}
    return doc.model_copy(
        update={
            "rated_by": lookup.raters.get(doc.id),
            "off_scale": doc.rating is not None and doc.rating not in on_scale,
        }
    )


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
