"""The case page's forms for metrics and tags: choose the extra metrics and the aggregate,
tag or weigh the selected queries. Each answers with the case page (422 when refused)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from app.accounts.deps import WebCaseDep, WebUser
from app.cases import flows
from app.cases.schemas import CaseUpdate
from app.errors import Invalid
from app.queries import service as query_service
from app.queries.bulk_lines import BulkLineError, clean_tags
from app.queries.schemas import QueriesPatch
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, field_text
from app.web_common.html_errors import HtmlErrorRoute

router = APIRouter(route_class=HtmlErrorRoute)


def _ids(form: FormData, name: str) -> list[int]:
    values = [v for v in form.getlist(name) if isinstance(v, str)]
    if any(not v.isdigit() or len(v) > 9 for v in values):
        raise Invalid((name,), "Pick from the list.")
    return [int(v) for v in values]


def _back(request: Request, case_id: int, saved: str) -> Response:
    url = request.url_for("case_page", case_id=case_id).include_query_params(saved=saved)
    return RedirectResponse(f"{url}#metrics-settings", status_code=303)


@router.post("/cases/{case_id}/metrics", name="case_metrics_submit")
def save_metrics(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Set the case's extra metrics and how query scores are averaged."""
    aggregate = field_text(form, "aggregate") or "mean"
    try:
        body = CaseUpdate.model_validate(
            {"metric_scorer_ids": _ids(form, "metric_scorer_ids"), "aggregate": aggregate}
        )
    except ValidationError as exc:
        raise Invalid(("metric_scorer_ids",), _first(exc)) from None
    flows.update_case(session=session, user=user, case=case, body=body)
    return _back(request, case.id, "metrics")


@router.post("/cases/{case_id}/queries/tags", name="case_tag_queries")
def tag_queries(
    request: Request,
    case: WebCaseDep,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add and remove tags of the selected queries and set their weight."""
    weight = field_text(form, "weight").strip()
    try:
        body = QueriesPatch(
            query_ids=_ids(form, "query_ids"),
            add_tags=list(clean_tags(field_text(form, "add_tags").split(","))),
            remove_tags=list(clean_tags(field_text(form, "remove_tags").split(","))),
            weight=float(weight) if weight else None,
        )
    except (ValidationError, BulkLineError, ValueError) as exc:
        message = _first(exc) if isinstance(exc, ValidationError) else str(exc)
        raise Invalid(("query_ids",), message) from None
    query_service.patch_queries(session=session, case=case, body=body)
    return _back(request, case.id, "tags")


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


__all__ = ["router"]
