"""Importing ratings from the case page: upload, preview what changes, then import."""

from __future__ import annotations

import io
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.accounts.deps import WebCaseDep, WebUser
from app.interop import ratings_io as service
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render
from app.web_common.uploads import spool_upload

router = APIRouter(route_class=HtmlErrorRoute)
IMPORT_PATH = r"/cases/[0-9]+/ratings/import"


@router.post("/cases/{case_id}/ratings/import", name="ratings_import_submit")
async def import_ratings(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Preview (the default) or import an uploaded CSV, qrels or RRE file; show what it did."""
    form = await request.form()
    upload = form.get("file")
    chosen = form.get("format")
    fmt: service.ImportFormat = "trec" if chosen == "trec" else "rre" if chosen == "rre" else "csv"
    preview = form.get("action") != "import"
    context: dict[str, Any] = {
        "case": case,
        "format": fmt,
        "preview": preview,
        "summary": None,
        "errors": [],
    }
    if not isinstance(upload, UploadFile):
        return render(
            request,
            "ratings_import.html",
            {**context, "problem": "Choose a file to import."},
            status_code=422,
        )
    # Closed by the wrapper below once the import has read it.
    raw = await spool_upload(upload)

    def work() -> service.ImportSummary:
        with io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
            return service.import_ratings(
                session=session, case=case, user=user, stream=text, fmt=fmt, preview=preview
            )

    try:
        summary = await run_in_threadpool(work)
    except service.ImportRejected as exc:
        return render(
            request,
            "ratings_import.html",
            {**context, "problem": exc.message, "errors": exc.errors, "summary": exc.summary},
            status_code=422,
        )
    except UnicodeDecodeError:
        problem = "The file is not UTF-8 text; nothing was imported."
        return render(request, "ratings_import.html", {**context, "problem": problem}, 422)
    return render(request, "ratings_import.html", {**context, "summary": summary, "problem": None})
