"""The click log pages' data: one function per page, rendered as HTML or as its JSON twin."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app import access
from app.bodies import ResponseBody
from app.books import service as books
from app.clicks import judging, pull, samples, service, slices
from app.clicks.schemas import (
    ClickLogRead,
    ClickLogSummary,
    ClickSlices,
    EstimateQuery,
    JudgementsEstimate,
    SampleBody,
    SampleRead,
    SlicesQuery,
)
from app.endpoints import service as endpoints
from app.models import ClickLog, User
from app.search import adapter_for

__all__ = ["ClickLogPage", "ClickLogsPage", "click_log_page", "click_logs_page"]


class ClickLogsPage(ResponseBody):
    logs: list[ClickLogRead]


class Choice(ResponseBody):
    id: int
    name: str


class ClickLogPage(ResponseBody):
    log: ClickLogRead
    summary: ClickLogSummary
    # The tallest bar of the CTR chart: every bar is drawn against it.
    ctr_max: float
    # The outcome of the last pull from an engine (its refusals left out), if any.
    last_pull: dict[str, Any] | None = None
    # Whether that pull is still under way (queued or running): the page then polls it.
    pull_active: bool = False
    # The OpenSearch and Elasticsearch endpoints the user may pull UBI indexes from.
    endpoints: list[Choice]
    # Zero-result queries and queries of low click-through (10% or less).
    slices: ClickSlices
    # Where the forms write: the books a judgement goes into, the cases a sample goes into.
    books: list[Choice]
    cases: list[Choice]
    # Asked for by the page's forms: how many pairs qualify, and a sample's preview.
    estimate: JudgementsEstimate | None = None
    sample: SampleRead | None = None


def click_logs_page(*, session: Session, user: User) -> ClickLogsPage:
    """Return the click logs the user may see."""
    return ClickLogsPage(
        logs=[service.to_read(x) for x in service.list_logs(session=session, user=user)]
    )


def click_log_page(
    *,
    session: Session,
    log: ClickLog,
    user: User,
    estimate: EstimateQuery | None = None,
    sample: SampleBody | None = None,
) -> ClickLogPage:
    """Return a click log with its summary (counts by action, dates, CTR by rank), its
    slices, and, when asked, how many pairs a judgement would judge and a sample's preview."""
    summary = service.summary(session=session, log=log)
    ctr_max = max((r.ctr or 0.0 for r in summary.ctr_by_rank), default=0.0)
    pullable = [
        Choice(id=e.id, name=e.name)
        for e in endpoints.list_endpoints(session=session, user=user)
        if adapter_for(e.engine).holds_ubi_logs
    ]
    return ClickLogPage(
        log=service.to_read(log),
        summary=summary,
        ctr_max=ctr_max,
        last_pull=last_pull(log),
        pull_active=pull.under_way(pull.current_pull(log)),
        endpoints=pullable,
        slices=slices.slices(session=session, log=log, body=SlicesQuery()),
        books=[Choice(id=b.id, name=b.name) for b in books.list_books(session=session, user=user)],
        cases=[
            Choice(id=c.id, name=c.name) for c in access.visible_cases(session=session, user=user)
        ],
        estimate=None
        if estimate is None
        else judging.estimate(session=session, log=log, body=estimate),
        sample=None if sample is None else samples.sample(session=session, log=log, body=sample),
    )


def last_pull(log: ClickLog) -> dict[str, Any] | None:
    """Return the log's last pull as the page shows it (its refusals left out)."""
    if not log.last_pull:
        return None
    shown = dict(log.last_pull)
    for name in ("queries", "events"):
        if isinstance(shown.get(name), dict):
            shown[name] = {k: v for k, v in shown[name].items() if k != "refused"}
    return shown
