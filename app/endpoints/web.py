"""Search endpoint pages: list, create, edit (secrets write-only), test, try, result files."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from app.accounts.deps import WebUser
from app.config import Settings
from app.endpoints import results, trying
from app.endpoints import service as endpoint_service
from app.endpoints.deps import WebEndpointDep
from app.endpoints.forms import EndpointForm
from app.endpoints.schemas import EndpointRead, TryRequest, TryResult
from app.errors import ImportRejected, Invalid
from app.models import SearchEndpoint, User
from app.search import ConnectionReport, adapter_for
from app.search.static import ResultFormat
from app.vocabulary import Engine
from app.web_common import parked
from app.web_common.confirm import DeleteConfirmation, confirm_page, gone
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render
from app.web_common.uploads import spool_upload

router = APIRouter(route_class=HtmlErrorRoute)

# The page path that may carry a large upload (RELEVO_MAX_UPLOAD_MB), like the API's.
RESULTS_PAGE_PATH = r"/endpoints/[0-9]+/results"

# After a save the endpoint is tried once, this briefly: a host that does not answer is a
# warning beside "Saved", never a reason to refuse the save.
SAVE_CHECK_TIMEOUT_S = 3.0


@router.get("/endpoints", name="endpoints_page")
def endpoints_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the user's search endpoints."""
    data = endpoint_service.endpoints_page(session=session, user=user)
    return render(request, "endpoints/endpoints.html", {"user": user, "page": data})


@router.get("/endpoints/new", name="endpoint_new_page")
def new_endpoint(request: Request, user: WebUser) -> Response:
    """Show an empty endpoint form."""
    return _form(request, user, None, EndpointForm(EndpointForm.blank))


@router.post("/endpoints", name="endpoint_create_submit")
def create_endpoint(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Create an endpoint; a bad field re-renders the form (422)."""
    editor = EndpointForm.read(form)
    try:
        body = editor.create_body()
        endpoint = endpoint_service.create_endpoint(session=session, user=user, body=body)
    except (FormErrors, Invalid) as exc:
        return _form(request, user, None, editor.add(exc), status_code=422)
    return _saved(request, endpoint.id)


@router.get("/endpoints/{endpoint_id}", name="endpoint_page")
async def endpoint_page(
    request: Request, endpoint: WebEndpointDep, user: WebUser, session: SessionDep
) -> Response:
    """Show an endpoint's form; secrets appear only as header names and 'basic auth set'.

    Right after a save the endpoint is checked as a run would use it (one test query, or
    for a result file whether results are stored): a failure is said beside "Saved" (the
    endpoint is saved all the same).
    """
    read = endpoint_service.to_read(endpoint)
    saved = request.query_params.get("saved") == "1"
    check = endpoint_service.SaveCheck()
    if saved:
        check = await endpoint_service.check_after_save(
            session=session, user=user, endpoint=endpoint, timeout_s=SAVE_CHECK_TIMEOUT_S
        )
    upload = None
    if token := request.query_params.get("upload", ""):
        upload = parked.read_json(
            data_dir=_data_dir(request), kind="results", owner_id=user.id, token=token
        )
    return _form(
        request,
        user,
        read,
        EndpointForm.of(read),
        saved=saved,
        check=check,
        upload=upload if isinstance(upload, dict) else None,
    )


@router.post("/endpoints/{endpoint_id}", name="endpoint_update_submit")
def update_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Save an endpoint; blank secret fields keep the stored secrets."""
    editor = EndpointForm.read(form)
    try:
        body = editor.update_body(remove_basic_auth=bool(field_text(form, "remove_basic_auth")))
        endpoint_service.update_endpoint(session=session, user=user, endpoint=endpoint, body=body)
    except (FormErrors, Invalid) as exc:
        read = endpoint_service.to_read(endpoint)
        return _form(request, user, read, editor.add(exc), status_code=422)
    return _saved(request, endpoint.id)


def _saved(request: Request, endpoint_id: int) -> Response:
    url = request.url_for("endpoint_page", endpoint_id=endpoint_id).include_query_params(saved=1)
    return see_other(url)


@router.post("/endpoints/{endpoint_id}/test", name="endpoint_test_submit")
async def test_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Send one query and show the hit count and a sample doc, or the engine's error."""
    query = field_text(form, "query").strip() or "test"
    field_spec = (
        field_text(form, "field_spec").strip() or adapter_for(endpoint.engine).test_field_spec
    )
    report = await endpoint_service.check_connection(
        endpoint=endpoint, query=query, template=None, field_spec=field_spec
    )
    read = endpoint_service.to_read(endpoint)
    return _form(
        request,
        user,
        read,
        EndpointForm.of(read),
        report=report,
        test={"query": query, "field_spec": field_spec},
    )


@router.post("/endpoints/{endpoint_id}/try", name="endpoint_try_submit")
async def try_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Send one query (or read the result file) and show the raw answer and the mapped docs."""
    typed = {
        "query_text": field_text(form, "query_text").strip() or "test",
        "template": field_text(form, "template").strip(),
    }
    body = TryRequest(query_text=typed["query_text"][:2000], template=typed["template"] or None)
    if adapter_for(endpoint.engine).answers_from_file:
        tried = await run_in_threadpool(
            trying.try_static, session=session, endpoint=endpoint, body=body
        )
    else:
        tried = await trying.try_endpoint(endpoint=endpoint, body=body, user_id=user.id)
    if is_htmx(request):
        context = {"endpoint": endpoint_service.to_read(endpoint), "tried": tried, "typed": typed}
        return render(request, "endpoints/partials/endpoint_try.html", context)
    read = endpoint_service.to_read(endpoint)
    return _form(request, user, read, EndpointForm.of(read), tried=tried, typed=typed)


@router.post("/endpoints/{endpoint_id}/results", name="endpoint_results_submit")
async def upload_results(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Replace a result-file endpoint's results with an uploaded TREC run or CSV.

    The outcome is kept briefly and shown on the endpoint page the browser is sent to, at
    the outcome itself: a refresh there re-posts nothing.
    """
    form = await request.form()
    upload = form.get("file")
    chosen = form.get("format") or "trec"
    fmt: ResultFormat = "csv" if chosen == "csv" else "trec"
    outcome: dict[str, Any]
    if chosen not in ("trec", "csv"):
        problem = f"{str(chosen)[:40]!r} is not a result format: choose TREC run or CSV."
        outcome = {"problem": problem, "errors": []}
    elif not isinstance(upload, UploadFile) or not upload.filename:
        outcome = {"problem": "Choose a file to upload.", "errors": []}
    else:
        outcome = await _store_results(session, endpoint, upload, fmt)
    token = parked.park_json(
        data_dir=_data_dir(request), kind="results", owner_id=user.id, value=outcome
    )
    anchor = "results-uploaded" if "summary" in outcome else "results-problem"
    url = request.url_for("endpoint_page", endpoint_id=endpoint.id).include_query_params(
        upload=token
    )
    return see_other(f"{url}#{anchor}")


async def _store_results(
    session: Session, endpoint: SearchEndpoint, upload: UploadFile, fmt: ResultFormat
) -> dict[str, Any]:
    # Closed by the wrapper below once the results have been read from it.
    raw = await spool_upload(upload)

    def work() -> results.ResultsSummary:
        with io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
            return results.store_results(session=session, endpoint=endpoint, stream=text, fmt=fmt)

    try:
        summary = await run_in_threadpool(work)
    except ImportRejected as exc:
        return {"problem": exc.message, "errors": exc.errors}
    except UnicodeDecodeError:
        return {"problem": "The file is not UTF-8 text; nothing was stored.", "errors": []}
    return {"summary": dataclasses.asdict(summary), "format": fmt}


def _data_dir(request: Request) -> Path:
    settings: Settings = request.app.state.settings
    return settings.data_dir


def _form(
    request: Request,
    user: User,
    endpoint: EndpointRead | None,
    editor: EndpointForm,
    *,
    status_code: int = 200,
    report: ConnectionReport | None = None,
    test: dict[str, str] | None = None,
    saved: bool = False,
    check: endpoint_service.SaveCheck | None = None,
    tried: TryResult | None = None,
    typed: dict[str, str] | None = None,
    upload: dict[str, Any] | None = None,
) -> Response:
    engine = editor.values.get("engine") or Engine.OPENSEARCH
    known = engine in tuple(Engine)
    test_spec = adapter_for(engine).test_field_spec if known else ""
    context = {
        "user": user,
        "endpoint": endpoint,
        "form": editor.values,
        "errors": editor.errors,
        "report": report,
        "saved": saved,
        "check": check or endpoint_service.SaveCheck(),
        "test": test or {"query": "test", "field_spec": test_spec},
        "tried": tried,
        "typed": typed or {"query_text": "test", "template": ""},
        "upload": upload,
    }
    return render(request, "endpoints/endpoint.html", context, status_code=status_code)


@router.get("/endpoints/{endpoint_id}/delete", name="endpoint_delete_page")
def confirm_endpoint(request: Request, endpoint: WebEndpointDep, user: WebUser) -> Response:
    """Ask before deleting a search endpoint."""
    doomed = DeleteConfirmation(
        kind="search endpoint",
        name=endpoint.name,
        consequence="Only an endpoint that no case uses can be deleted.",
        action=str(request.url_for("endpoint_delete_submit", endpoint_id=endpoint.id)),
        back=str(request.url_for("endpoint_page", endpoint_id=endpoint.id)),
    )
    return confirm_page(request, user, doomed)


@router.post("/endpoints/{endpoint_id}/delete", name="endpoint_delete_submit")
def delete_endpoint(
    request: Request,
    endpoint: WebEndpointDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Delete an endpoint no case uses (409 page otherwise) and go back to the endpoints."""
    endpoint_service.delete_endpoint(session=session, user=user, endpoint=endpoint)
    return gone(request, str(request.url_for("endpoints_page")))
