"""Try an endpoint: one query, the raw answer (truncated) and the docs it makes.

Every engine kind answers the same way: ``{status, raw, docs, num_found, error}``. A
``static`` endpoint reads its result file (``raw`` shows the stored lines as JSON).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx
from sqlalchemy.orm import Session

from app.endpoints import results
from app.endpoints.schemas import TryDoc, TryRequest, TryResult
from app.endpoints.service import default_template, engine_config
from app.models import SearchEndpoint
from app.outbound.transport import engine_http_client
from app.search import SearchClient, SearchError, SearchRequest, SearchResult, adapter_for

__all__ = ["RAW_CHARS", "try_endpoint", "try_static"]

RAW_CHARS = 20_000


@dataclass
class _Seen:
    status: int | None = None
    raw: list[str] = field(default_factory=list)

    def __call__(self, status: int, content: bytes) -> None:
        self.status = status
        self.raw.append(content[: RAW_CHARS * 4].decode("utf-8", "replace")[:RAW_CHARS])


def _docs(result: SearchResult) -> list[TryDoc]:
    return [TryDoc(id=d.id, rank=d.position, fields=dict(d.fields)) for d in result.docs]


def try_static(*, session: Session, endpoint: SearchEndpoint, body: TryRequest) -> TryResult:
    """Return what a static endpoint's result file holds for the query text."""
    found = results.results_for(
        session=session, endpoint_id=endpoint.id, queries=[(-1, body.query_text)], rows=body.rows
    )[-1]
    docs = _docs(found)
    raw = json.dumps([d.model_dump() for d in docs], ensure_ascii=False)[:RAW_CHARS]
    return TryResult(status=None, raw=raw, docs=docs, num_found=found.num_found, error=None)


async def try_endpoint(
    *,
    endpoint: SearchEndpoint,
    body: TryRequest,
    http: httpx.AsyncClient | None = None,
    user_id: int | None = None,
) -> TryResult:
    """Send one query to a live endpoint and return its raw answer and mapped docs.

    ``user_id``: the caller, whose share of the JavaScript sandbox a mapper takes.
    """
    request = SearchRequest(
        template=body.template or default_template(endpoint.engine, endpoint.method),
        query_text=body.query_text,
        field_spec=body.field_spec or adapter_for(endpoint.engine).test_field_spec,
        rows=body.rows,
    )
    config = engine_config(endpoint, sandbox_owner=user_id)
    seen = _Seen()
    try:
        if http is None:
            async with engine_http_client() as own:  # guarded, as every outbound call
                result = await SearchClient(own, attempts=1).trial(config, request, seen)
        else:
            result = await SearchClient(http, attempts=1).trial(config, request, seen)
    except SearchError as exc:
        raw = seen.raw[-1] if seen.raw else ""
        return TryResult(status=seen.status, raw=raw, docs=[], num_found=None, error=exc.message)
    raw = seen.raw[-1] if seen.raw else ""
    return TryResult(
        status=seen.status, raw=raw, docs=_docs(result), num_found=result.num_found, error=None
    )
