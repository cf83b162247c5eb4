"""The click log pages' data: one function per page, rendered as HTML or as its JSON twin."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.bodies import Out
from app.clicks import service, slices
from app.clicks.schemas import ClickLogRead, ClickLogSummary, ClickSlices, SlicesQuery
from app.endpoints import service as endpoints
from app.models import ClickLog, User
from app.vocabulary import Engine

__all__ = ["ClickLogPage", "ClickLogsPage", "click_log_page", "click_logs_page"]


class ClickLogsPage(Out):
    logs: list[ClickLogRead]


class Choice(Out):
    id: int
    name: str


class ClickLogPage(Out):
    log: ClickLogRead
    summary: ClickLogSummary
    # The tallest bar of the CTR chart: every bar is drawn against it.
    ctr_max: float
    # The outcome of the last pull from an engine (its refusals left out), if any.
    last_pull: dict[str, Any] | None = None
    # The OpenSearch and Elasticsearch endpoints the user may pull UBI indexes from.
    endpoints: list[Choice]
    # Zero-result queries and queries of low click-through (10% or less).
    slices: ClickSlices


def click_logs_page(*, session: Session, user: User) -> ClickLogsPage:
    """Return the click logs the user may see."""
    return ClickLogsPage(
        logs=[service.to_read(x) for x in service.list_logs(session=session, user=user)]
    )


def click_log_page(*, session: Session, log: ClickLog, user: User) -> ClickLogPage:
    """Return a click log with its summary: counts by action, dates, CTR by rank."""
    summary = service.summary(session=session, log=log)
    ctr_max = max((r.ctr or 0.0 for r in summary.ctr_by_rank), default=0.0)
    pullable = [
        Choice(id=e.id, name=e.name)
        for e in endpoints.list_endpoints(session=session, user=user)
        if e.engine in (Engine.OPENSEARCH, Engine.ELASTICSEARCH)
    ]
    return ClickLogPage(
        log=service.to_read(log),
        summary=summary,
        ctr_max=ctr_max,
        last_pull=log.last_pull,
        endpoints=pullable,
        slices=slices.slices(session=session, log=log, body=SlicesQuery()),
    )
