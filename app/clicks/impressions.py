"""A click log's impressions as arrays for the click models, read with set-based SQL.

An impression is one doc shown at a rank in one search (a UBI `query_id`); the same doc
shown twice in one search counts once, at its best rank. Impressions come from `impression`
events when the log has them, else from the queries' `query_response_hit_ids`. An
impression's value is the largest weight among the actions done on that doc in that search.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from sqlalchemy import ColumnElement, and_, case, func, select
from sqlalchemy.orm import Session

from app.clicks.click_models import Impressions
from app.clicks.schemas import Window
from app.models import ClickLog, UbiEvent, UbiQuery

__all__ = ["LoadedLog", "impression_source", "load", "window_clauses"]

Source = Literal["events", "hit_ids", "none"]


@dataclass(frozen=True)
class LoadedLog:
    """The impressions, and the (query text, doc id) of each pair index."""

    impressions: Impressions
    pairs: list[tuple[str, str]]
    source: Source


def impression_source(*, session: Session, log: ClickLog) -> Source:
    """Return where the log's impressions come from: events, queries' hit ids, or nowhere."""
    has_events = session.scalar(
        select(UbiEvent.id)
        .where(UbiEvent.click_log_id == log.id, UbiEvent.action_name == "impression")
        .limit(1)
    )
    if has_events is not None:
        return "events"
    has_hits = session.scalar(
        select(UbiQuery.id)
        .where(UbiQuery.click_log_id == log.id, UbiQuery.hit_ids.is_not(None))
        .limit(1)
    )
    return "hit_ids" if has_hits is not None else "none"


def window_clauses(column: Any, app_column: Any, window: Window) -> list[ColumnElement[bool]]:
    """Return the WHERE conditions of a date range (since included) and an application."""
    found: list[ColumnElement[bool]] = []
    if window.since is not None:
        found.append(column >= window.since)
    if window.until is not None:
        found.append(column < window.until)
    if window.application is not None:
        found.append(app_column == window.application)
    return found


def _action_values(log: ClickLog, actions: Mapping[str, float], window: Window) -> Any:
    weight = case(
        *((UbiEvent.action_name == name, float(w)) for name, w in actions.items()), else_=0.0
    )
    return (
        select(
            UbiEvent.query_id.label("query_id"),
            UbiEvent.object_id.label("object_id"),
            func.max(weight).label("value"),
        )
        .where(
            UbiEvent.click_log_id == log.id,
            UbiEvent.action_name.in_(list(actions)),
            UbiEvent.query_id.is_not(None),
            UbiEvent.object_id.is_not(None),
            *window_clauses(UbiEvent.timestamp, UbiEvent.application, window),
        )
        .group_by(UbiEvent.query_id, UbiEvent.object_id)
        .subquery()
    )


def _from_events(
    session: Session, log: ClickLog, actions: Mapping[str, float], window: Window, max_rank: int
) -> list[Any]:
    values = _action_values(log, actions, window)
    # The query record says what was searched; an event's own text is the fallback.
    text = func.coalesce(func.max(UbiQuery.user_query), func.max(UbiEvent.user_query))
    stmt = (
        select(
            UbiEvent.query_id,
            text,
            UbiEvent.object_id,
            func.min(UbiEvent.rank),
            func.coalesce(func.max(values.c.value), 0.0),
        )
        .outerjoin(
            UbiQuery, and_(UbiQuery.click_log_id == log.id, UbiQuery.key == UbiEvent.query_id)
        )
        .outerjoin(
            values,
            and_(values.c.query_id == UbiEvent.query_id, values.c.object_id == UbiEvent.object_id),
        )
        .where(
            UbiEvent.click_log_id == log.id,
            UbiEvent.action_name == "impression",
            UbiEvent.query_id.is_not(None),
            UbiEvent.object_id.is_not(None),
            UbiEvent.rank.between(1, max_rank),
            *window_clauses(UbiEvent.timestamp, UbiEvent.application, window),
        )
        .group_by(UbiEvent.query_id, UbiEvent.object_id)
    )
    return [row for row in session.execute(stmt) if row[1] is not None]


def _from_hit_ids(
    session: Session, log: ClickLog, actions: Mapping[str, float], window: Window, max_rank: int
) -> list[Any]:
    values = _action_values(log, actions, Window(application=window.application))
    clicked = {
        (q, o): float(v)
        for q, o, v in session.execute(
            select(values.c.query_id, values.c.object_id, values.c.value)
        )
    }
    stmt = select(UbiQuery.key, UbiQuery.user_query, UbiQuery.hit_ids).where(
        UbiQuery.click_log_id == log.id,
        UbiQuery.hit_ids.is_not(None),
        *window_clauses(UbiQuery.timestamp, UbiQuery.application, window),
    )
    rows: list[Any] = []
    for key, text, hits in session.execute(stmt):
        seen: set[str] = set()
        for rank, doc in enumerate(hits[:max_rank], start=1):
            if doc not in seen:
                seen.add(doc)
                rows.append((key, text, doc, rank, clicked.get((key, doc), 0.0)))
    return rows


def load(
    *,
    session: Session,
    log: ClickLog,
    actions: Mapping[str, float],
    window: Window,
    max_rank: int,
) -> LoadedLog:
    """Return the log's impressions (within the window, ranks 1..max_rank) as arrays."""
    source = impression_source(session=session, log=log)
    reader = _from_events if source == "events" else _from_hit_ids
    rows = [] if source == "none" else reader(session, log, actions, window, max_rank)
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return LoadedLog(Impressions(empty, empty, empty, np.zeros(0), 0), [], source)
    query_ids, texts, docs, ranks, values = zip(*rows, strict=True)
    _, session_index = np.unique(np.array(query_ids, dtype=object), return_inverse=True)
    keys = np.array([f"{t}\x00{d}" for t, d in zip(texts, docs, strict=True)], dtype=object)
    names, pair_index = np.unique(keys, return_inverse=True)
    pairs = [tuple(str(name).split("\x00", 1)) for name in names]
    return LoadedLog(
        impressions=Impressions(
            session=session_index.astype(np.int64),
            pair=pair_index.astype(np.int64),
            rank=np.array(ranks, dtype=np.int64),
            value=np.array(values, dtype=np.float64),
            n_pairs=len(names),
        ),
        pairs=[(p[0], p[1]) for p in pairs],
        source=source,
    )
