"""Click log pages: the list, one log's summary with its CTR-by-rank chart, and its forms."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app import access
from app.accounts.deps import WebUser
from app.clicks import pages as page_data
from app.clicks import pull
from app.clicks.deps import WebClickLogDep
from app.clicks.schemas import PullBody
from app.errors import Invalid, NotFound
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


@router.get("/click-logs/{click_log_id}", name="click_log_page")
def click_log_page(
    request: Request, log: WebClickLogDep, user: WebUser, session: SessionDep
) -> Response:
    """Show a click log's summary: counts by action, dates, CTR by rank, and its forms."""
    page = page_data.click_log_page(session=session, log=log, user=user)
    return render(request, "clicks/click_log.html", {"user": user, "page": page})


@router.post("/click-logs/{click_log_id}/pull", name="click_log_pull_submit")
def pull_submit(
    request: Request,
    log: WebClickLogDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Pull the chosen endpoint's UBI indexes; the page then shows how the pull went."""
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
        pull.pull(session=session, log=log, endpoint=endpoint, body=body)
    except FormErrors as exc:
        return error_page(request, 422, "; ".join(exc.errors.values()))
    except (Invalid, NotFound) as exc:
        return error_page(request, exc.status_code, exc.message)
    except pull.PullFailed:
        pass  # the log's last pull says what went wrong
    return see_other(str(request.url_for("click_log_page", click_log_id=log.id)) + "#pull")
