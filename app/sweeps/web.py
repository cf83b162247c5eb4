"""Sweep pages: start a sweep from the case page, follow it, apply the best combination."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.cases.web.cases import refused_sweep
from app.db import after_commit
from app.errors import Invalid
from app.runs.deps import RunManagerDep
from app.sweeps import results, service
from app.sweeps.deps import WebSweepDep
from app.sweeps.forms import SweepForm
from app.vocabulary import ACTIVE_RUN_STATUSES, RunStatus
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter(route_class=HtmlErrorRoute)
PREFIX = "sweep."


def grid_from_form(form_values: dict[str, str]) -> dict[str, Any]:
    """Return {knob: [values]} from "sweep.<knob>" fields of comma-separated numbers."""
    grid: dict[str, Any] = {}
    for key, text in form_values.items():
        if not key.startswith(PREFIX) or not text.strip():
            continue
        values: list[Any] = []
        for part in text.replace(";", ",").split(","):
            item = part.strip()
            if not item:
                continue
            try:
                values.append(float(item))
            except ValueError:
                values.append(item)  # refused by the body's validation, with the knob's name
        grid[key.removeprefix(PREFIX)] = values
    return grid


@router.post("/cases/{case_id}/sweeps", name="sweep_create_submit")
def create_sweep(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    manager: RunManagerDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Start a sweep from the case page's form and open its page; a bad grid shows the case
    page again with each problem under its knob and the values typed (422)."""
    sweep_form = SweepForm.read(form)
    try:
        sweep = service.create_sweep(session=session, case=case, body=sweep_form.body())
    except (FormErrors, Invalid) as exc:
        return refused_sweep(request, user, session, case, sweep_form.add(exc))
    sweep_id = sweep.id  # it starts once committed: its runs read it with sessions of their own
    after_commit(session, lambda: service.run_in_background(manager=manager, sweep_id=sweep_id))
    url = request.url_for("sweep_page", case_id=case.id, sweep_id=sweep.id)
    return see_other(url)


@router.get("/cases/{case_id}/sweeps/{sweep_id}", name="sweep_page")
def sweep_page(
    request: Request, sweep: WebSweepDep, case: WebCaseDep, user: WebUser, session: SessionDep
) -> Response:
    """Show a sweep's progress, results table, chart and best combination."""
    read = results.read_sweep(session=session, sweep=sweep)
    context = {"user": user, "case": case, "sweep": read, "active": ACTIVE_RUN_STATUSES}
    if is_htmx(request):
        return render(request, "sweeps/partials/sweep_results.html", context)
    return render(request, "sweeps/sweep.html", context)


@router.post("/cases/{case_id}/sweeps/{sweep_id}/cancel", name="sweep_cancel_submit")
def cancel_sweep(
    request: Request, sweep: WebSweepDep, case: WebCaseDep, session: SessionDep, _csrf: CsrfChecked
) -> Response:
    """Stop the sweep after its current run."""
    service.cancel_sweep(session=session, sweep=sweep)
    url = request.url_for("sweep_page", case_id=case.id, sweep_id=sweep.id)
    return see_other(url)


@router.post("/cases/{case_id}/sweeps/{sweep_id}/apply", name="sweep_apply_submit")
def apply_sweep(
    request: Request,
    sweep: WebSweepDep,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Set the case's knobs to the chosen combination (a new try) and open the case; a
    partial run's knobs are applied only from its confirmation page."""
    text = field_text(form, "run_id")
    run_id = int(text) if text.isdigit() else 0
    confirmed = field_text(form, "confirm_partial") == "true"
    run = service.sweep_run(session=session, sweep=sweep, run_id=run_id)
    if run.status == RunStatus.FINISHED and not results.is_complete(run) and not confirmed:
        context = {"user": user, "case": case, "sweep_id": sweep.id, "run": run}
        return render(request, "sweeps/sweep_apply_confirm.html", context)
    service.apply_sweep(
        session=session,
        user=user,
        case=case,
        sweep=sweep,
        run_id=run_id,
        confirm_partial=confirmed,
    )
    return see_other(request.url_for("case_page", case_id=case.id))
