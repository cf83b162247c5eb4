"""What a run reads of its case: a numbered try and the queries' ratings.

Runs read them through here, and so does the cases domain, which sits above runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.errors import NotFound
from app.models import Case, Rating, Try

__all__ = ["get_try", "ratings_of"]


def get_try(*, session: Session, case: Case, number: int) -> Try:
    """Return one numbered try of the case, or 404."""
    found = (
        session.scalar(select(Try).where(Try.case_id == case.id, Try.number == number))
        if valid_id(number)
        else None
    )
    if found is None:
        raise NotFound(f"Case {case.id} has no try {number}.")
    return found


def ratings_of(*, session: Session, query_ids: Sequence[int]) -> dict[int, dict[str, float]]:
    """Return every rating of these queries: query id → doc id → rating."""
    result: dict[int, dict[str, float]] = {qid: {} for qid in query_ids}
    if not query_ids:
        return result
    stmt = select(Rating.query_id, Rating.doc_id, Rating.rating).where(
        Rating.query_id.in_(query_ids)
    )
    for query_id, doc_id, rating in session.execute(stmt):
        result[query_id][doc_id] = rating
    return result
