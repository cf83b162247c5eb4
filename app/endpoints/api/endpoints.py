"""Search endpoints."""

from __future__ import annotations

import io
from typing import Literal

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from app.accounts.deps import CurrentUser
from app.endpoints import results, service, trying
from app.endpoints.deps import EndpointDep
from app.endpoints.schemas import (
    ConnectionReportRead,
    ConnectionTest,
    EndpointCreate,
    EndpointRead,
    EndpointUpdate,
    ResultsUploaded,
    TryRequest,
    TryResult,
)
from app.errors import ImportRejected
from app.search import adapter_for
from app.web_common.deps import SessionDep
from app.web_common.owned import Owned, OwnedSchemas, OwnedService, RouteDocs, add_owned_routes
from app.web_common.uploads import spooled_body

router = APIRouter(prefix="/search-endpoints", tags=["search endpoints"])


add_owned_routes(
    router,
    Owned("endpoint", "endpoints", "/{endpoint_id}", user=CurrentUser, item=EndpointDep),
    OwnedSchemas(read=EndpointRead, create=EndpointCreate, update=EndpointUpdate),
    OwnedService(
        service.to_read,
        service.list_endpoints,
        service.create_endpoint,
        service.update_endpoint,
        service.delete_endpoint,
    ),
    RouteDocs(
        list="Return the caller's search endpoints.",
        create="Create a search endpoint.",
        get="Return one search endpoint (secrets as header names and has_basic_auth only).",
        update="Change a search endpoint.",
        delete="Delete a search endpoint no case uses (its owner only).",
    ),
)


@router.post("/{endpoint_id}/test", response_model=ConnectionReportRead)
async def test_endpoint(body: ConnectionTest, endpoint: EndpointDep) -> ConnectionReportRead:
    """Send one query and report the hit count and a sample doc, or the engine's error."""
    report = await service.check_connection(
        endpoint=endpoint,
        query=body.query,
        template=body.query_template,
        field_spec=body.field_spec,
    )
    sample = {"id": report.sample.id, "fields": report.sample.fields} if report.sample else None
    return ConnectionReportRead(
        ok=report.ok,
        num_found=report.num_found,
        sample=sample,
        message=report.message,
        duration_ms=report.duration_ms,
    )


# The path the body limit middleware lets carry a large upload (RELEVO_MAX_UPLOAD_MB).
RESULTS_PATH = r"/api/v1/search-endpoints/[0-9]+/results"


@router.put("/{endpoint_id}/results", response_model=ResultsUploaded)
async def upload_results(
    endpoint: EndpointDep,
    session: SessionDep,
    request: Request,
    format: Literal["trec", "csv"] = "trec",
) -> ResultsUploaded:
    """Replace a static endpoint's results with a TREC run or CSV file, all or nothing."""
    raw = await spooled_body(request)

    def work() -> results.ResultsSummary:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        try:
            return results.store_results(
                session=session, endpoint=endpoint, stream=text, fmt=format
            )
        except UnicodeDecodeError as exc:
            raise ImportRejected(
                "The file is not UTF-8 text; nothing was stored.",
                [(1, f"byte {exc.start} of the file is not UTF-8")],
            ) from exc
        finally:
            text.close()

    summary = await run_in_threadpool(work)
    return ResultsUploaded(queries=summary.queries, docs=summary.docs, replaced=summary.replaced)


@router.post("/{endpoint_id}/try", response_model=TryResult)
async def try_endpoint(
    body: TryRequest, endpoint: EndpointDep, user: CurrentUser, session: SessionDep
) -> TryResult:
    """Send one query and return the raw answer (first 20,000 characters) and the docs."""
    if adapter_for(endpoint.engine).answers_from_file:
        return await run_in_threadpool(
            trying.try_static, session=session, endpoint=endpoint, body=body
        )
    return await trying.try_endpoint(endpoint=endpoint, body=body, user_id=user.id)
