"""Quepid case exports: import one as a new case, export a case in Quepid's shape."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.api.ratings_io import _attachment, _streamed
from app.deps import CaseDep, CurrentUser, SessionDep
from app.errors import BadRequest
from app.schemas.ratings_io import QuepidCaseImported
from app.services import cases as case_service
from app.services import quepid_case as service

router = APIRouter(prefix="/cases", tags=["import and export"])


async def upload_bytes(request: Request) -> bytes:
    """Return the uploaded file: the request body, or the multipart field `file`."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise BadRequest(
                'Send the file as the multipart field "file" (or as the request body).'
            )
        return await upload.read()
    return await request.body()


@router.post("/import", response_model=QuepidCaseImported, status_code=201)
async def import_case(
    user: CurrentUser,
    session: SessionDep,
    request: Request,
    format: Literal["quepid"] = "quepid",
) -> QuepidCaseImported:
    """Create a case from a Quepid case export (JSON): queries, ratings, try, endpoint, scorer.

    Nothing is written unless all of it is: a file that is not a Quepid case export answers
    422 naming the first missing or wrong key.
    """
    raw = await upload_bytes(request)

    def work() -> QuepidCaseImported:
        imported = service.import_case(session=session, user=user, raw=raw)
        case = case_service.to_read(session=session, case=imported.case)
        return QuepidCaseImported(
            **case.model_dump(),
            warnings=imported.warnings,
            queries_created=imported.queries,
            ratings_set=imported.ratings,
            search_endpoint_created=imported.endpoint_created,
            scorer_created=imported.scorer_created,
        )

    return await run_in_threadpool(work)


@router.get("/{case_id}/export", response_model=None, name="export_case")
def export_case(case: CaseDep, request: Request, format: Literal["quepid"] = "quepid") -> Response:
    """The case as Quepid's case export JSON (its current try), which Quepid imports."""
    return StreamingResponse(
        _streamed(request, case.id, service.export_case),
        media_type="application/json",
        headers=_attachment(f"case-{case.id}-quepid.json"),
    )
