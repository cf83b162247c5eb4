"""The compare page: two runs of a case (or a run with the current ratings), side by side."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.accounts.deps import WebUser
from app.cases.deps import WebCaseDep
from app.compare import query as side_service
from app.compare import service
from app.compare.schemas import COMPARE_SORTS, CompareSort
from app.errors import BadRequest, NotFound
from app.web_common.deps import SessionDep
from app.web_common.html_errors import HtmlErrorRoute
from app.web_common.templating import render

router = APIRouter(route_class=HtmlErrorRoute)


def _sort(value: str) -> CompareSort:
    return value if value in COMPARE_SORTS else "delta"


def _run_id(value: str, case_id: int) -> int | None:
    """Return the run id of a form field; empty means none (the current ratings)."""
    text = value.strip()
    if not text:
        return None
    if not text.isdigit():
        raise NotFound(f"Case {case_id} has no run {text!r}.")
    return int(text)


@router.get("/cases/{case_id}/compare", name="compare_page")
def compare_page(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    base: str = "",
    other: str = "",
    sort: str = "delta",
) -> Response:
    """Show how each query's score changed between two runs, judged by the current ratings."""
    base_id = _run_id(base, case.id)
    if base_id is None:
        raise BadRequest("Choose the base run to compare.")
    data = service.compare_by_ids(
        session=session,
        case=case,
        base_id=base_id,
        other_id=_run_id(other, case.id),
        sort=_sort(sort),
    )
    context = {"user": user, "case": case, "page": data, "sort_labels": service.COMPARE_SORT_LABELS}
    return render(request, "compare/compare.html", context)


@router.get("/cases/{case_id}/compare/queries/{query_id}", name="compare_query_page")
def compare_query_page(
    request: Request,
    case: WebCaseDep,
    user: WebUser,
    session: SessionDep,
    query_id: int,
    base: str = "",
    other: str = "",
) -> Response:
    """Show one query's results from two runs side by side."""
    base_id, other_id = _run_id(base, case.id), _run_id(other, case.id)
    if base_id is None or other_id is None:
        raise BadRequest("Choose the two runs to put side by side.")
    data = side_service.side_by_side(
        session=session, case=case, query_id=query_id, base_id=base_id, other_id=other_id
    )
    return render(request, "compare/compare_query.html", {"user": user, "case": case, "page": data})
