"""Click log pages: the list, one log's summary with its CTR-by-rank chart, and its forms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app import access
from app.accounts.deps import WebUser
from app.clicks import flows, judging, pull
from app.clicks import pages as page_data
from app.clicks.deps import PullManagerDep, WebClickLogDep
from app.clicks.schemas import EstimateQuery, FromLogBody, JudgementsBody, PullBody, SampleBody
from app.errors import Conflict, Invalid, NotFound
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, FormErrors, field_text, parse_body
from app.web_common.html_errors import HtmlErrorRoute, error_page
from app.web_common.redirects import see_other
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


@router.get("/click-logs", name="click_logs_page")
def click_logs_page(request: Request, user: WebUser, session: SessionDep) -> Response:
    """List the click logs the user may see."""
    page = page_data.click_logs_page(session=session, user=user)
    return render(request, "clicks/click_logs.html", {"user": user, "page": page})


ESTIMATE_FIELDS = ("min_impressions", "max_rank")
SAMPLE_FIELDS = ("design", "size", "seed", "application")
JUDGE_FIELDS = ("book_id", "model", "min_impressions", "max_rank", "mapping", "application")


def _values(source: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    found = {name: str(source.get(name) or "").strip() for name in names}
    return {name: value for name, value in found.items() if value}


@router.get("/click-logs/{click_log_id}", name="click_log_page")
def click_log_page(
    request: Request, log: WebClickLogDep, user: WebUser, session: SessionDep
) -> Response:
    """Show a click log's summary: counts by action, dates, CTR by rank, and its forms.

    The judgement form's "Estimate" and the sampler's "Preview" come back here with their
    fields in the address: the page then says how many pairs qualify, or shows the sample
    (with the seed it drew, which the "Add to case" form sends on).
    """
    params = request.query_params
    errors: dict[str, str] = {}
    estimate: EstimateQuery | None = None
    sample: SampleBody | None = None
    try:
        if "min_impressions" in params:
            estimate = parse_body(EstimateQuery, _values(params, ESTIMATE_FIELDS))
    except FormErrors as exc:
        errors |= {f"estimate.{k}": v for k, v in exc.errors.items()}
    try:
        if "design" in params:
            sample = parse_body(SampleBody, _values(params, SAMPLE_FIELDS))
    except FormErrors as exc:
        errors |= {f"sample.{k}": v for k, v in exc.errors.items()}
    page = page_data.click_log_page(
        session=session, log=log, user=user, estimate=estimate, sample=sample
    )
    context = {"user": user, "page": page, "errors": errors, "asked": dict(params)}
    return render(request, "clicks/click_log.html", context, 422 if errors else 200)


@router.post("/click-logs/{click_log_id}/judgements", name="click_log_judge_submit")
def judge_submit(
    request: Request,
    log: WebClickLogDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Fit the chosen model and write its judgements into the book, then open the book."""
    try:
        body = parse_body(JudgementsBody, _values(form, JUDGE_FIELDS))
        book = access.visible_book(session=session, user=user, book_id=body.book_id)
        judging.judge(session=session, log=log, book=book, body=body)
    except FormErrors as exc:
        return error_page(request, 422, "; ".join(exc.errors.values()))
    except (Invalid, NotFound) as exc:
        return error_page(request, exc.status_code, exc.message)
    return see_other(request.url_for("book_page", book_id=book.id))


@router.post("/click-logs/{click_log_id}/sample", name="click_log_sample_submit")
def sample_submit(
    request: Request,
    log: WebClickLogDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add the previewed sample (the same seed draws it again) to a case, then open the case."""
    values: dict[str, Any] = _values(form, SAMPLE_FIELDS)
    values["click_log_id"] = log.id
    try:
        body = parse_body(FromLogBody, values)
        case_id = int(field_text(form, "case_id") or 0)
        case = access.visible_case(session=session, user=user, case_id=case_id)
        flows.add_sample_to_case(session=session, case=case, log=log, body=body)
    except FormErrors as exc:
        return error_page(request, 422, "; ".join(exc.errors.values()))
    except ValueError:
        return error_page(request, 422, "Choose a case to add the sample to.")
    except (Invalid, NotFound) as exc:
        return error_page(request, exc.status_code, exc.message)
    return see_other(request.url_for("case_page", case_id=case.id))


@router.post("/click-logs/{click_log_id}/pull", name="click_log_pull_submit")
def pull_submit(
    request: Request,
    log: WebClickLogDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    manager: PullManagerDep,
    _csrf: CsrfChecked,
) -> Response:
    """Start pulling the chosen endpoint's UBI indexes; the page then shows its progress."""
    values = {
        name: field_text(form, name)
        for name in ("search_endpoint_id", "queries_index", "events_index")
        if field_text(form, name)
    }
    try:
        body = parse_body(PullBody, values)
        endpoint = access.visible_endpoint(
            session=session, user=user, endpoint_id=body.search_endpoint_id
        )
        poll_url = str(request.url_for("get_pull", click_log_id=log.id))
        state = pull.start(
            session=session, log=log, endpoint=endpoint, body=body, poll_url=poll_url
        )
        pull.launch_after_commit(session, manager, click_log_id=log.id, pull_id=state.id)
    except FormErrors as exc:
        return error_page(request, 422, "; ".join(exc.errors.values()))
    except (Invalid, NotFound, Conflict, pull.PullFailed) as exc:
        return error_page(request, exc.status_code, exc.message)
    return see_other(str(request.url_for("click_log_page", click_log_id=log.id)) + "#pull")


@router.get("/click-logs/{click_log_id}/pull", name="click_log_pull_partial")
def pull_partial(request: Request, log: WebClickLogDep) -> Response:
    """The log's last pull, as the page shows it (polled while the pull is under way)."""
    page = {
        "log": {"id": log.id},
        "last_pull": page_data.last_pull(log),
        "pull_active": pull.under_way(pull.current_pull(log)),
    }
    return render(request, "clicks/partials/last_pull.html", {"page": page})
