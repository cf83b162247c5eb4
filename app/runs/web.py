"""A run's pages: start one from the case page, cancel it, and its live progress bar."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.cases.deps import WebCaseDep
from app.runs import launch as run_launch
from app.runs import service as run_service
from app.runs.deps import RunManagerDep, WebRunDep
from app.vocabulary import ACTIVE_RUN_STATUSES
from app.web_common.deps import SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)


@router.post("/cases/{case_id}/runs", name="case_run")
def start_run(
    request: Request,
    case: WebCaseDep,
    session: SessionDep,
    manager: RunManagerDep,
    _csrf: CsrfChecked,
) -> Response:
    """Start a run; htmx gets the live progress bar, a plain form goes back to the case."""
    run = run_launch.submit_run(session=session, case=case, manager=manager)
    if is_htmx(request):
        return render(
            request,
            "runs/partials/run_progress.html",
            {"run": run_service.summary(run), "case_id": case.id},
        )
    return see_other(request.url_for("case_page", case_id=case.id))


@router.post("/cases/{case_id}/runs/{run_id}/cancel", name="run_cancel_submit")
def cancel_run(
    request: Request,
    run: WebRunDep,
    case: WebCaseDep,
    session: SessionDep,
    manager: RunManagerDep,
    _csrf: CsrfChecked,
) -> Response:
    """Cancel a run; htmx gets the progress bar back, a plain form goes back to the case."""
    if run.status in ACTIVE_RUN_STATUSES:  # a run that ended meanwhile is simply shown
        run = run_launch.cancel_run(session=session, run=run, manager=manager)
    if is_htmx(request):
        return render(
            request,
            "runs/partials/run_progress.html",
            {"run": run_service.summary(run), "case_id": case.id},
            headers={"HX-Trigger": "run-finished"},
        )
    return see_other(request.url_for("case_page", case_id=case.id))


@router.get("/cases/{case_id}/runs/{run_id}/progress", name="run_progress_partial")
def run_progress(request: Request, found: WebRunDep, case: WebCaseDep) -> Response:
    """Return the progress bar of a run; when it ends, tell the page to refresh its parts."""
    run = run_service.summary(found)
    ended = run.status not in ACTIVE_RUN_STATUSES
    headers = {"HX-Trigger": "run-finished"} if ended else None
    return render(
        request,
        "runs/partials/run_progress.html",
        {"run": run, "case_id": case.id},
        headers=headers,
    )
