"""Slices of a click log's queries: searches that found nothing, and texts nobody clicks.

Set-based SQL over the log's searches (its query records; a log of events only counts its
events' query ids). A search found nothing when its record's `query_response_hit_ids` was
empty, or, in a log with `impression` events, when it has neither hit ids nor an impression.
A search drew a click when a `click` event names its query id. The click-through of a text
is its clicked searches over its searches that showed results.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, and_, case, cast, exists, func, null, select
from sqlalchemy.orm import Session

from app.clicks.impressions import window_clauses
from app.clicks.schemas import ClickSlices, SliceQuery, SlicesQuery
from app.models import ClickLog, UbiEvent, UbiQuery

__all__ = ["slices"]


def _searches(session: Session, log: ClickLog, window: SlicesQuery) -> Any:
    has_queries = session.scalar(
        select(UbiQuery.id).where(UbiQuery.click_log_id == log.id).limit(1)
    )
    if has_queries is not None:
        return (
            select(
                UbiQuery.key.label("key"),
                UbiQuery.user_query.label("text"),
                UbiQuery.hit_count.label("hit_count"),
            )
            .where(
                UbiQuery.click_log_id == log.id,
                *window_clauses(UbiQuery.timestamp, UbiQuery.application, window),
            )
            .subquery()
        )
    return (
        select(
            UbiEvent.query_id.label("key"),
            func.max(UbiEvent.user_query).label("text"),
            cast(null(), Integer).label("hit_count"),
        )
        .where(
            UbiEvent.click_log_id == log.id,
            UbiEvent.query_id.is_not(None),
            UbiEvent.user_query.is_not(None),
            *window_clauses(UbiEvent.timestamp, UbiEvent.application, window),
        )
        .group_by(UbiEvent.query_id)
        .subquery()
    )


def _event(log: ClickLog, key: Any, action: str) -> Any:
    return exists().where(
        UbiEvent.click_log_id == log.id, UbiEvent.query_id == key, UbiEvent.action_name == action
    )


def slices(*, session: Session, log: ClickLog, body: SlicesQuery) -> ClickSlices:
    """Return the log's zero-result texts and its texts of low click-through."""
    searches = _searches(session, log, body)
    with_impressions = (
        session.scalar(
            select(UbiEvent.id)
            .where(UbiEvent.click_log_id == log.id, UbiEvent.action_name == "impression")
            .limit(1)
        )
        is not None
    )
    # Not NULL when the record gave no hit ids: NOT NULL is NULL, and would hide its clicks.
    empty = func.coalesce(searches.c.hit_count, -1) == 0
    if with_impressions:
        unseen = and_(searches.c.hit_count.is_(None), ~_event(log, searches.c.key, "impression"))
        empty = empty | unseen
    zero = case((empty, 1), else_=0)
    clicked = case((and_(~empty, _event(log, searches.c.key, "click")), 1), else_=0)
    per_text = (
        select(
            searches.c.text.label("text"),
            func.count().label("searches"),
            func.sum(zero).label("zero"),
            func.sum(clicked).label("clicked"),
        )
        .group_by(searches.c.text)
        .subquery()
    )
    rows = [
        (str(text), int(n), int(z or 0), int(c or 0))
        for text, n, z, c in session.execute(
            select(per_text).where(per_text.c.searches >= body.min_searches)
        )
    ]
    found = [
        SliceQuery(
            text=text,
            searches=n,
            zero_result_searches=z,
            clicked_searches=c,
            ctr=c / (n - z) if n > z else None,
        )
        for text, n, z, c in rows
    ]
    by_searches = sorted(found, key=lambda q: (-q.searches, q.text))
    zero_results = [q for q in by_searches if q.zero_result_searches > 0]
    low_ctr = [q for q in by_searches if q.ctr is not None and q.ctr <= body.max_ctr]
    return ClickSlices(
        zero_results=zero_results[: body.limit],
        zero_results_total=len(zero_results),
        low_ctr=low_ctr[: body.limit],
        low_ctr_total=len(low_ctr),
        min_searches=body.min_searches,
        max_ctr=body.max_ctr,
    )
