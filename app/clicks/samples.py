"""Samples of a click log's queries: the population (distinct texts, searches) and a draw."""

from __future__ import annotations

import secrets

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.clicks import sampling
from app.clicks.impressions import window_clauses
from app.clicks.schemas import SampleBody, SampledQuery, SampleRead, Window
from app.models import ClickLog, UbiEvent, UbiQuery

__all__ = ["population", "sample"]


def population(*, session: Session, log: ClickLog, window: Window) -> list[tuple[str, int]]:
    """Return each distinct query text with its number of searches, in text order.

    Searches are the log's query records; a log of events only counts its events' query ids.
    """
    stmt = (
        select(UbiQuery.user_query, func.count())
        .where(
            UbiQuery.click_log_id == log.id,
            *window_clauses(UbiQuery.timestamp, UbiQuery.application, window),
        )
        .group_by(UbiQuery.user_query)
        .order_by(UbiQuery.user_query)
    )
    found = [(text, int(n)) for text, n in session.execute(stmt)]
    if found or session.scalar(select(UbiQuery.id).where(UbiQuery.click_log_id == log.id)):
        return found
    events = (
        select(UbiEvent.user_query, func.count(func.distinct(UbiEvent.query_id)))
        .where(
            UbiEvent.click_log_id == log.id,
            UbiEvent.user_query.is_not(None),
            UbiEvent.query_id.is_not(None),
            *window_clauses(UbiEvent.timestamp, UbiEvent.application, window),
        )
        .group_by(UbiEvent.user_query)
        .order_by(UbiEvent.user_query)
    )
    return [(str(text), int(n)) for text, n in session.execute(events)]


def sample(*, session: Session, log: ClickLog, body: SampleBody) -> SampleRead:
    """Return a seeded sample of the log's queries with inclusion probabilities and weights."""
    seed = body.seed if body.seed is not None else secrets.randbelow(2**32)
    texts = population(session=session, log=log, window=body)
    strata = None if body.strata is None else {str(k): v for k, v in body.strata.items()}
    drawn = sampling.draw(
        [n for _, n in texts], design=body.design, size=body.size, seed=seed, strata=strata
    )
    return SampleRead(
        design=body.design,
        seed=seed,
        population=len(texts),
        searches=sum(n for _, n in texts),
        queries=[
            SampledQuery(
                text=texts[d.index][0],
                frequency=texts[d.index][1],
                inclusion_probability=d.inclusion_probability,
                weight=d.weight,
                stratum=d.stratum,
            )
            for d in drawn
        ],
    )
