"""The case page's forms for metrics and tags: choose the extra metrics and the aggregate,
tag or weigh the selected queries. Each answers with the case page (422 when refused)."""

from __future__ import annotations

from typing import ClassVar

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from app.accounts.deps import WebUser
from app.cases import flows
from app.cases.deps import WebCaseDep
from app.cases.schemas import CaseUpdate
from app.cases.web.cases import back_to_case, refused_tags
from app.errors import Invalid
from app.queries import service as query_service
from app.queries.bulk_lines import BulkLineError, clean_tags
from app.queries.schemas import QueriesPatch
from app.web_common.deps import FormDep, SessionDep
from app.web_common.forms import CsrfChecked, WebForm, field_text
from app.web_common.html_errors import HtmlErrorRoute

router = APIRouter(route_class=HtmlErrorRoute)


def _ids(form: FormData, name: str) -> list[int]:
    values = [v for v in form.getlist(name) if isinstance(v, str)]
    if any(not v.isdigit() or len(v) > 9 for v in values):
        raise Invalid((name,), "Pick from the list.")
    return [int(v) for v in values]


class TagsForm(WebForm):
    """The tag-and-weigh bar over the query list (the ticked queries come with it)."""

    fields: ClassVar[tuple[str, ...]] = ("add_tags", "remove_tags", "weight")


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
    return back_to_case(request, case.id, "metrics")


@router.post("/cases/{case_id}/queries/tags", name="case_tag_queries")
def tag_queries(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    form: FormDep,
    _csrf: CsrfChecked,
) -> Response:
    """Add and remove tags of the selected queries and set their weight; a refusal shows
    the case page again with the message under the bar and what was typed (422)."""
    tags = TagsForm.read(form)
    weight = tags.text("weight")
    try:
        ids = _ids(form, "query_ids")
        if not ids:
            raise Invalid(("query_ids",), "Tick at least one query in the list below first.")
        body = QueriesPatch(
            query_ids=ids,
            add_tags=list(clean_tags(tags.text("add_tags").split(","))),
            remove_tags=list(clean_tags(tags.text("remove_tags").split(","))),
            weight=float(weight) if weight else None,
        )
    except (ValidationError, BulkLineError, ValueError, Invalid) as exc:
        message = exc.message if isinstance(exc, Invalid) else _message(exc)
        tags.fail("tags", message)
        return refused_tags(request, user, session, case, tags)
    query_service.patch_queries(session=session, case=case, body=body)
    return back_to_case(request, case.id, "tags")


def _message(exc: ValidationError | BulkLineError | ValueError) -> str:
    if isinstance(exc, ValidationError):
        return _first(exc)
    if isinstance(exc, BulkLineError):
        return str(exc)
    return "Weight must be a number, like 0.5 or 2."


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


__all__ = ["router"]
