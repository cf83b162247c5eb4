"""Clicks raters' judgements of a book's pairs, listed with the pairs beside people's."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.clicks.schemas import ClickJudgementRead
from app.models import ClickJudgement, ClickRater

__all__ = ["judgements_by_pair"]


def judgements_by_pair(*, session: Session, book_id: int) -> dict[int, list[ClickJudgementRead]]:
    """Return the clicks raters' judgements of a book's pairs, by pair id (rater id order)."""
    stmt = (
        select(ClickJudgement, ClickRater.model)
        .join(ClickRater, ClickRater.id == ClickJudgement.rater_id)
        .where(ClickJudgement.book_id == book_id)
        .order_by(ClickJudgement.pair_id, ClickJudgement.rater_id)
    )
    found: dict[int, list[ClickJudgementRead]] = {}
    for row, model in session.execute(stmt):
        fields = {
            name: getattr(row, name) for name in ClickJudgementRead.model_fields if name != "model"
        }
        found.setdefault(row.pair_id, []).append(ClickJudgementRead(model=model, **fields))
    return found
