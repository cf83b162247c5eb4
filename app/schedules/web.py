"""HTML pages: the home dashboard, and a case's schedule, alerts and notes (a card on the
case page, loaded by htmx, and the same as a page of its own without JavaScript)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.accounts.deps import WebUser
from app.cases import notes
from app.cases.deps import WebCaseDep
from app.cases.schemas import AnnotationCreate, ScheduleBody
from app.errors import Invalid, RelevoError
from app.models import Case, User
from app.runs.metrics import metric_defs
from app.schedules import alerts, service, webhooks
from app.schedules.dashboard import dashboard
from app.schedules.deps import WebAlertDep, WebWebhookDep
from app.schedules.pages import watch_page
from app.schedules.schemas import AlertCreate, AlertRead, WebhookCreate
from app.teams import service as teams
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked
from app.web_common.redirects import see_other
from app.web_common.templating import is_htmx, render

router = APIRouter()


@router.get("/dashboard", name="dashboard_page")
def dashboard_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """The cases the user may see, what got worse first (for htmx: only what got worse)."""
    data = dashboard(session=session, user=user)
    name = "schedules/partials/worse.html" if is_htmx(request) else "schedules/dashboard.html"
    context = {"user": user, "dashboard": data, "kind_labels": alerts.KIND_LABELS}
    return render(request, name, context)


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
    added_id: int | None = None,
) -> Response:
    data = watch_page(session=session, case=case, user=user)
    context = {
        "user": user,
        "watch": data,
        "error": error,
        "kind_labels": alerts.KIND_LABELS,
        "webhook_names": {w.id: w.name for w in data.webhooks},
        "added": _added(request, data.alerts, added_id),
        "least_changed": alerts.min_changed_queries(0.05),
        "metric_names": _metric_names(session, case, data.alerts),
        "primary_id": case.scorer_id,
    }
    name = "schedules/partials/watch.html" if is_htmx(request) else "schedules/case_watch.html"
    return render(request, name, context, status_code=status_code)


def _metric_names(session: Session, case: Case, rules: list[AlertRead]) -> dict[int, str]:
    """Return the names of the metrics the rules watch (None: the case's primary), by id."""
    ids = {a.metric_scorer_id or case.scorer_id for a in rules} - {None}
    return {d.scorer_id: d.name for d in metric_defs(session=session, ids=sorted(ids))}


def _added(request: Request, rules: list[AlertRead], added_id: int | None) -> AlertRead | None:
    """Return the rule just added (``?added=<id>`` after the form), to say what to know."""
    wanted = str(added_id) if added_id is not None else request.query_params.get("added", "")
    return next((a for a in rules if str(a.id) == wanted), None)


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
        done = work()
    except (RelevoError, ValidationError) as exc:
        session.rollback()
        message = exc.message if isinstance(exc, RelevoError) else _first(exc)
        return _watch(request, case, user, session, error=message, status_code=422)
    target = request.url_for("case_watch_page", case_id=case.id)
    if isinstance(done, int):  # a rule was added: its notes show beside the form
        target = target.include_query_params(added=done)
    if is_htmx(request):
        added = done if isinstance(done, int) else None
        return _watch(request, case, user, session, added_id=added)
    return see_other(target)


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

    def work() -> int:
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
        return alerts.create_alert(session=session, case=case, user=user, body=body).id

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


@router.get("/webhooks", name="webhooks_page")
def webhooks_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """The webhooks the user may use, and a form to add one."""
    return _webhooks(request, user, session)


def _case_back(request: Request, raw: object) -> int | None:
    # The watch page links here with ?case_id= so that this page leads back to it.
    text = str(raw or "")
    return int(text) if text.isdigit() and len(text) < 10 else None


def _webhooks(
    request: Request,
    user: User,
    session: SessionDep,
    *,
    error: str | None = None,
    typed: dict[str, object] | None = None,
    case_id: int | None = None,
    status_code: int = 200,
) -> Response:
    hooks = webhooks.list_webhooks(session=session, user=user)
    my_teams = teams.list_teams(session=session, user=user)
    names = {t.id: t.name for t in my_teams}
    context = {
        "user": user,
        "webhooks": [webhooks.to_read(w) for w in hooks],
        "owned": {w.id for w in hooks if w.owner_id == user.id},
        "teams": my_teams,
        "team_names": names,
        "error": error,
        "typed": typed or {},
        "case_id": case_id
        if case_id is not None
        else _case_back(request, request.query_params.get("case_id")),
    }
    return render(request, "schedules/webhooks.html", context, status_code=status_code)


@router.post("/webhooks", name="webhooks_submit")
def webhooks_submit(
    request: Request, user: WebUser, session: SessionDep, form: FormDep, _csrf: CsrfChecked
) -> Response:
    """Add a webhook from the page's form (a refusal shows the form again, as typed)."""
    case_id = _case_back(request, form.get("case_id"))
    team_ids = [int(str(v)) for v in form.getlist("team_ids") if str(v).isdigit()]
    typed: dict[str, object] = {
        "name": str(form.get("name") or ""),
        "url": str(form.get("url") or ""),
        "team_ids": team_ids,
    }
    try:
        body = WebhookCreate(
            name=str(typed["name"]),
            url=str(typed["url"]).strip(),
            secret=str(form.get("secret") or "") or None,
            team_ids=team_ids,
        )
        webhooks.create_webhook(session=session, user=user, body=body)
    except (RelevoError, ValidationError) as exc:
        session.rollback()
        message = exc.message if isinstance(exc, RelevoError) else _first(exc)
        return _webhooks(
            request, user, session, error=message, typed=typed, case_id=case_id, status_code=422
        )
    target = request.url_for("webhooks_page")
    if case_id is not None:
        target = target.include_query_params(case_id=case_id)
    return see_other(target)


@router.post("/webhooks/{webhook_id}/delete", name="webhook_delete")
def webhook_delete(
    request: Request,
    webhook: WebWebhookDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Delete a webhook (its owner only; alert rules naming it send nothing there after)."""
    case_id = _case_back(request, form.get("case_id"))
    try:
        webhooks.delete_webhook(session=session, user=user, webhook=webhook)
    except RelevoError as exc:
        session.rollback()
        return _webhooks(
            request, user, session, error=exc.message, case_id=case_id, status_code=exc.status_code
        )
    target = request.url_for("webhooks_page")
    if case_id is not None:
        target = target.include_query_params(case_id=case_id)
    return see_other(target)
