"""Ratings export and import, and runs as TREC run files."""

from __future__ import annotations

import io
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.accounts.deps import CurrentUser
from app.cases.deps import CaseDep
from app.interop import downloads
from app.interop import ratings_io as service
from app.interop.schemas import ImportResult
from app.runs.deps import RunDep
from app.web_common.deps import SessionDep, SessionFactoryDep
from app.web_common.uploads import spooled_body

router = APIRouter(prefix="/cases/{case_id}", tags=["import and export"])

ExportFormat = Literal["csv", "trec", "rre", "quepid"]
# The path the body limit middleware lets carry a large upload (RELEVO_MAX_UPLOAD_MB).
IMPORT_PATH = r"/api/v1/cases/[0-9]+/ratings/import"


@router.get("/ratings/export", response_model=None)
def export_ratings(
    case: CaseDep, factory: SessionFactoryDep, format: ExportFormat = "csv"
) -> Response:
    """The case's ratings as CSV, TREC qrels, RRE judgements or Quepid's ratings JSON."""
    exports = {
        "csv": (service.export_csv, "text/csv; charset=utf-8", f"case-{case.id}-ratings.csv"),
        "trec": (service.export_trec, "text/plain; charset=utf-8", f"case-{case.id}.qrels"),
        "rre": (service.export_rre, "application/json", f"case-{case.id}-rre.json"),
        "quepid": (service.export_quepid, "application/json", f"case-{case.id}-ratings.json"),
    }
    lines, media, name = exports[format]
    body = downloads.case_file(session_factory=factory, case_id=case.id, lines=lines)
    return StreamingResponse(body, media_type=media, headers=downloads.attachment(name))


@router.get("/runs/{run_id}/export", response_model=None)
def export_run(
    run: RunDep, case: CaseDep, factory: SessionFactoryDep, format: Literal["trec"] = "trec"
) -> Response:
    """A run as a TREC run file whose scores reproduce Relevo's ranking."""
    lines = downloads.run_as_trec(run.id)
    return StreamingResponse(
        downloads.case_file(session_factory=factory, case_id=case.id, lines=lines),
        media_type="text/plain; charset=utf-8",
        headers=downloads.attachment(f"case-{case.id}-run-{run.id}.trec"),
    )


@router.post("/ratings/import", response_model=ImportResult)
async def import_ratings(
    case: CaseDep,
    user: CurrentUser,
    session: SessionDep,
    request: Request,
    format: service.ImportFormat = "csv",
    preview: bool = False,
) -> ImportResult:
    """Import ratings from CSV (`query,docid,rating`), TREC qrels or RRE ratings JSON, all or
    nothing.

    With `preview=true` nothing is written: the answer says what would change.
    """
    raw = await spooled_body(request)

    def work() -> service.ImportSummary:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        try:
            return service.import_ratings(
                session=session, case=case, user=user, stream=text, fmt=format, preview=preview
            )
        except UnicodeDecodeError as exc:
            raise service.ImportRejected(
                "The file is not UTF-8 text; nothing was imported.",
                [(1, f"byte {exc.start} of the file is not UTF-8")],
            ) from exc
        finally:
            text.close()

    summary = await run_in_threadpool(work)
    return ImportResult(preview=preview, **_fields(summary))


def _fields(summary: service.ImportSummary) -> dict[str, Any]:
    return {
        "lines": summary.lines,
        "queries_created": summary.queries_created,
        "ratings_set": summary.ratings_set,
        "ratings_unchanged": summary.ratings_unchanged,
        "duplicates": summary.duplicates,
        "new_queries": summary.new_queries,
        "query_match": summary.query_match,
        "qids_by_id": summary.qids_by_id,
        "qids_by_text": summary.qids_by_text,
    }
