"""Quepid case exports: import one as a new case, export a case in Quepid's shape."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from app.accounts.deps import CurrentUser
from app.cases import service as case_service
from app.cases.deps import CaseDep
from app.cases.schemas import CaseRead
from app.interop import downloads
from app.interop import quepid_case as service
from app.interop.schemas import QuepidCaseImported
from app.web_common.deps import SessionDep, SessionFactoryDep
from app.web_common.uploads import upload_bytes

router = APIRouter(prefix="/cases", tags=["import and export"])


class QuepidCaseImportReport(QuepidCaseImported):
    """The new case and what the import did: counts, endpoint, scorer, warnings."""

    search_endpoint_name: str
    search_endpoint_url: str
    search_endpoint_reachable: bool = Field(
        description="whether one query sent to the endpoint on import was answered; the "
        "import stands either way"
    )
    search_endpoint_problem: str | None = Field(
        description="why the endpoint did not answer (null when it did)"
    )
    scorer_name: str = Field(
        description='Quepid\'s shipped scorers are named "AP@10 (Quepid)" and so on'
    )


@router.post("/import", response_model=QuepidCaseImportReport, status_code=201)
async def import_case(
    user: CurrentUser,
    session: SessionDep,
    request: Request,
    format: Literal["quepid"] = "quepid",
) -> QuepidCaseImportReport:
    """Create a case from a Quepid case export (JSON): queries, ratings, try, endpoint, scorer.

    Nothing is written unless all of it is: a file that is not a Quepid case export answers
    422 naming the first missing or wrong key. After the import one query is sent to the
    endpoint (a short wait); an engine Relevo cannot reach is reported, the case stays.
    """
    raw = await upload_bytes(request)

    def work() -> tuple[service.ImportedCase, CaseRead]:
        imported = service.import_case(session=session, user=user, raw=raw)
        return imported, case_service.to_read(session=session, case=imported.case)

    imported, case = await run_in_threadpool(work)
    await service.check_endpoint(imported)
    return QuepidCaseImportReport(
        **case.model_dump(),
        warnings=imported.warnings,
        queries_created=imported.queries,
        ratings_set=imported.ratings,
        search_endpoint_created=imported.endpoint_created,
        scorer_created=imported.scorer_created,
        search_endpoint_name=imported.endpoint.name,
        search_endpoint_url=imported.endpoint.url,
        search_endpoint_reachable=imported.endpoint_problem is None,
        search_endpoint_problem=imported.endpoint_problem,
        scorer_name=imported.scorer.name,
    )


@router.get("/{case_id}/export", response_model=None, name="export_case")
def export_case(
    case: CaseDep, factory: SessionFactoryDep, format: Literal["quepid"] = "quepid"
) -> Response:
    """The case as Quepid's case export JSON (its current try), which Quepid imports."""
    return StreamingResponse(
        downloads.case_file(session_factory=factory, case_id=case.id, lines=service.export_case),
        media_type="application/json",
        headers=downloads.attachment(f"case-{case.id}-quepid.json"),
    )
