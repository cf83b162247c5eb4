"""Importing a Quepid case export from the cases list."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.accounts.deps import WebUser
from app.cases.pages import cases_list as case_pages
from app.cases.web.cases import new_case_form
from app.errors import Invalid
from app.interop import quepid_case as service
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.post("/cases/import", name="quepid_case_import_submit")
async def import_quepid_case(
    request: Request, user: WebUser, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Create a case from an uploaded Quepid case export and say what the import did (or what
    is wrong with the file)."""
    form = await request.form()
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        return _cases_with_problem(request, user, session, "Choose a Quepid case export to import.")
    raw = await upload.read()
    try:
        imported = await run_in_threadpool(
            lambda: service.import_case(session=session, user=user, raw=raw)
        )
    except Invalid as exc:
        return _cases_with_problem(request, user, session, exc.message)
    await service.check_endpoint(imported)
    # What the import did, before opening the case: counts, endpoint, scorer, warnings.
    context = {"user": user, "imported": imported, "case": imported.case}
    return render(request, "interop/quepid_import.html", context)


def _cases_with_problem(
    request: Request, user: WebUser, session: SessionDep, problem: str
) -> Response:
    data = case_pages.cases_page(session=session, user=user)
    context = {
        "user": user,
        "page": data,
        "form": new_case_form(data).values,
        "errors": {},
        "quepid_problem": problem,
    }
    return render(request, "cases/cases.html", context, status_code=422)
