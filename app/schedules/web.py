"""HTML pages: the home dashboard, and a case's schedule, alerts and notes (a card on the
case page, loaded by htmx, and the same as a page of its own without JavaScript)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from app.accounts.deps import WebCaseDep, WebUser
from app.errors import Invalid, RelevoError
from app.models import Case, User
from app.schedules import alerts, notes, service
from app.schedules.dashboard import dashboard
from app.schedules.deps import WebAlertDep
from app.schedules.page_data import watch_page
from app.schedules.schemas import AlertCreate, AnnotationCreate, ScheduleBody
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.templating import is_htmx, render

router = APIRouter()


@router.get("/dashboard", name="dashboard_page")
def dashboard_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """The cases the user may see, what got worse first (for htmx: only what got worse)."""
    data = dashboard(session=session, user=user)
    name = "partials/worse.html" if is_htmx(request) else "dashboard.html"
    return render(request, name, {"user": user, "dashboard": data})


@router.get("/cases/{case_id}/watch", name="case_watch_page")
def case_watch(request: Request, case: WebCaseDep, user: WebUser, session: SessionDep) -> Response:
    """The case's schedule, alert rules, alerts sent and notes (a card for htmx, else a page)."""
    return _watch(request, case, user, session)


def _watch(
    request: Request,
    case: Case,
    user: User,
    session: SessionDep,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    data = watch_page(session=session, case=case, user=user)
    context = {"user": user, "watch": data, "error": error}
    name = "partials/watch.html" if is_htmx(request) else "case_watch.html"
    return render(request, name, context, status_code=status_code)


def _number(form: FormData, name: str) -> float | None:
    raw = str(form.get(name) or "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise Invalid(name, f"{name.replace('_', ' ').capitalize()} must be a number.") from None


def _whole(form: FormData, name: str) -> int | None:
    value = _number(form, name)
    return None if value is None else int(value)


def _done(
    request: Request,
    case: Case,
    user: User,
    session: SessionDep,
    work: Callable[[], object],
) -> Response:
    try:
        work()
    except (RelevoError, ValidationError) as exc:
        session.rollback()
        message = exc.message if isinstance(exc, RelevoError) else _first(exc)
        return _watch(request, case, user, session, error=message, status_code=422)
    if is_htmx(request):
        return _watch(request, case, user, session)
    target = request.url_for("case_watch_page", case_id=case.id)
    return RedirectResponse(str(target), status_code=303)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"


@router.post("/cases/{case_id}/schedule", name="case_schedule_submit")
def schedule_submit(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Set the case's schedule (an empty expression stops it)."""
    cron = str(form.get("cron") or "").strip()

    def work() -> None:
        if not cron:
            if service.get_schedule(session=session, case=case) is not None:
                service.delete_schedule(session=session, case=case)
            return
        body = ScheduleBody(cron=cron, try_number=_whole(form, "try_number"))
        service.set_schedule(session=session, case=case, body=body)

    return _done(request, case, user, session, work)


@router.post("/cases/{case_id}/alerts", name="case_alert_submit")
def alert_submit(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add an alert rule from the card's form."""

    def work() -> None:
        emails = [e.strip() for e in str(form.get("email") or "").split(",") if e.strip()]
        body = AlertCreate(
            kind=str(form.get("kind") or ""),
            points=_number(form, "points"),
            threshold=_number(form, "threshold"),
            alpha=_number(form, "alpha") or 0.05,
            error_share=_number(form, "error_share") or 0.2,
            baseline_run_id=_whole(form, "baseline_run_id"),
            webhook_ids=[int(str(v)) for v in form.getlist("webhook_ids") if str(v).isdigit()],
            email=emails,
        )
        alerts.create_alert(session=session, case=case, user=user, body=body)

    return _done(request, case, user, session, work)


@router.post("/cases/{case_id}/alerts/{alert_id}/delete", name="case_alert_delete")
def alert_delete(
    request: Request,
    alert: WebAlertDep,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    _csrf: CsrfChecked,
) -> Response:
    """Remove an alert rule."""

    def work() -> None:
        alerts.delete_alert(session=session, alert=alert)

    return _done(request, case, user, session, work)


@router.post("/cases/{case_id}/annotations", name="case_annotation_submit")
def annotation_submit(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add a note to the case's timeline (now, or on a run)."""

    def work() -> None:
        body = AnnotationCreate(text=str(form.get("text") or ""), run_id=_whole(form, "run_id"))
        notes.create_annotation(session=session, case=case, user=user, body=body)

    return _done(request, case, user, session, work)
