"""Importing ratings from the case page: upload, preview what changes, then import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.config import Settings
from app.interop import ratings_io as service
from app.web_common import parked
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)
IMPORT_PATH = r"/cases/[0-9]+/ratings/import"


# The partial form's fields that carry a previewed file to the import.
TOKEN_FIELD = "upload_token"
NAME_FIELD = "upload_name"
GONE = "The file from the preview is no longer kept (it is kept for 30 minutes); choose it again."


@router.post("/cases/{case_id}/ratings/import", name="ratings_import_submit")
async def import_ratings(
    request: Request, case: WebCaseDep, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Preview (the default) or import an uploaded CSV, qrels or RRE file; show what it did.

    A previewed file is kept on the server under a token that the preview's form sends
    back, so importing after a preview needs no second pick of the file.
    """
    form = await request.form()
    upload = form.get("file")
    chosen = form.get("format")
    fmt: service.ImportFormat = "trec" if chosen == "trec" else "rre" if chosen == "rre" else "csv"
    preview = form.get("action") != "import"
    context: dict[str, Any] = {
        "user": user,
        "case": case,
        "format": fmt,
        "preview": preview,
        "summary": None,
        "errors": [],
        "kept": None,
    }
    data_dir = _data_dir(request)
    if isinstance(upload, UploadFile) and upload.filename:
        # A new pick replaces whatever an earlier preview kept.
        token = await run_in_threadpool(
            parked.park, data_dir=data_dir, kind="ratings", owner_id=user.id, content=upload.file
        )
        name = upload.filename[:200]
    else:
        token, name = str(form.get(TOKEN_FIELD) or ""), str(form.get(NAME_FIELD) or "")[:200]
        if not token:
            return _page(request, {**context, "problem": "Choose a file to import."}, 422)
    path = parked.claim(data_dir=data_dir, kind="ratings", owner_id=user.id, token=token)
    if path is None:
        return _page(request, {**context, "problem": GONE}, 422)
    context["kept"] = {"token": token, "name": name}

    def work() -> service.ImportSummary:
        with path.open("r", encoding="utf-8-sig", newline="") as text:
            return service.import_ratings(
                session=session, case=case, user=user, stream=text, fmt=fmt, preview=preview
            )

    try:
        summary = await run_in_threadpool(work)
    except service.ImportRejected as exc:
        failed = {"problem": exc.message, "errors": exc.errors, "summary": exc.summary}
        return _page(request, {**context, **failed}, 422)
    except UnicodeDecodeError:
        problem = "The file is not UTF-8 text; nothing was imported."
        return _page(request, {**context, "problem": problem}, 422)
    if not preview:  # imported: the kept copy has served
        parked.drop(data_dir=data_dir, kind="ratings", owner_id=user.id, token=token)
        context["kept"] = None
    return _page(request, {**context, "summary": summary, "problem": None})


def _page(request: Request, context: dict[str, Any], status_code: int = 200) -> Response:
    return render(request, "interop/ratings_import.html", context, status_code=status_code)


def _data_dir(request: Request) -> Path:
    settings: Settings = request.app.state.settings
    return settings.data_dir
