"""Judgements from clicks: a click model's estimates, mapped to a book's scale, as one rater.

A pair with fewer than `min_impressions` impressions stays unjudged (it never gets a 0).
Estimates map to the scale by quantiles (a pair never clicked gets the lowest rating; the
clicked pairs share the other ratings equally, the highest estimates on the top one) or by
thresholds (rating i+1 from the i-th threshold
up). Re-running the same model over the same log into the same book replaces its ratings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
from sqlalchemy import Table, delete, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.clicks import click_models, dbn, impressions
from app.clicks.schemas import (
    DEFAULT_ACTIONS,
    EstimateQuery,
    JudgementsBody,
    JudgementsEstimate,
    JudgementsResult,
)
from app.errors import Invalid
from app.judges.schemas import RaterRef
from app.models import Book, ClickJudgement, ClickLog, ClickRater, Pair
from app.models.base import utcnow

__all__ = ["estimate", "judge", "to_scale"]

CHUNK = 500
JUDGEMENTS: Table = ClickJudgement.__table__  # type: ignore[assignment]
MAX_TEXT, MAX_DOC = 1000, 500  # a book pair's longest query text and doc id


def to_scale(
    estimates: np.ndarray, scale: Sequence[float], *, thresholds: Sequence[float] | None
) -> np.ndarray:
    """Return each estimate's rating: by thresholds when given, else by quantiles."""
    levels = np.asarray(scale, dtype=np.float64)
    if thresholds is not None:
        return levels[np.searchsorted(np.asarray(thresholds), estimates, side="right")]
    ratings = np.full(estimates.size, levels[0])
    # Never clicked: the lowest rating. The clicked pairs share the other ratings equally,
    # so a log where most pairs drew no click still grades the ones that did.
    clicked = estimates > 0
    if clicked.any():
        ratings[clicked] = _quantiles(estimates[clicked], levels[1:])
    return ratings


def _quantiles(estimates: np.ndarray, levels: np.ndarray) -> np.ndarray:
    # By rank, equal estimates sharing the rank of the first of them.
    _values, inverse, counts = np.unique(estimates, return_inverse=True, return_counts=True)
    below = np.cumsum(counts) - counts
    ranks = (below[inverse] + 0.5) / estimates.size
    cuts = np.linspace(0, 1, len(levels) + 1)[1:-1]
    return levels[np.searchsorted(cuts, ranks, side="right")]


def _check(body: JudgementsBody, book: Book) -> None:
    if body.mapping == "thresholds":
        wanted = len(book.scale) - 1
        given = body.thresholds or []
        if len(given) != wanted or any(b <= a for a, b in pairwise(given)):
            raise Invalid(
                "thresholds", f"give {wanted} ascending thresholds, one per step of the scale"
            )
    elif body.thresholds is not None:
        raise Invalid("thresholds", 'thresholds go with mapping "thresholds"')


def _fit(log: impressions.LoadedLog, body: JudgementsBody) -> click_models.Estimates:
    data = log.impressions
    if body.model == "coec":
        return click_models.coec(data, max_rank=body.max_rank)
    if body.model == "pbm":
        return click_models.pbm(data, max_rank=body.max_rank)
    if body.model == "sdbn":
        return click_models.sdbn(data, max_rank=body.max_rank)
    return dbn.dbn(data, max_rank=body.max_rank)


def _pair_ids(
    session: Session, book: Book, keys: list[tuple[str, str]]
) -> tuple[dict[tuple[str, str], int], int]:
    """Add the missing pairs to the book; return every key's pair id and how many were new."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    # One cached statement sent with many parameter sets (no per-batch compilation).
    stmt = (
        dialect.insert(Pair)
        .on_conflict_do_nothing(index_elements=["book_id", "query_text", "doc_id"])
        .returning(Pair.id)
    )
    created = 0
    for start in range(0, len(keys), CHUNK):
        rows = [
            {"book_id": book.id, "query_text": q, "doc_id": d}
            for q, d in keys[start : start + CHUNK]
        ]
        created += len(session.execute(stmt, rows).all())
    wanted = set(keys)
    found = session.execute(
        select(Pair.query_text, Pair.doc_id, Pair.id).where(Pair.book_id == book.id)
    )
    return {(q, d): i for q, d, i in found if (q, d) in wanted}, created


def _rater(session: Session, book: Book, log: ClickLog, body: JudgementsBody) -> ClickRater:
    rater = session.scalar(
        select(ClickRater).where(
            ClickRater.book_id == book.id,
            ClickRater.click_log_id == log.id,
            ClickRater.model == body.model,
        )
    )
    if rater is None:
        rater = ClickRater(book_id=book.id, click_log_id=log.id, model=body.model)
        session.add(rater)
    rater.name = f"clicks {body.model.upper()}: {log.name}"[:300]
    rater.settings = body.model_dump(mode="json", exclude={"book_id"})
    rater.updated_at = utcnow()
    session.flush()
    session.execute(delete(ClickJudgement).where(ClickJudgement.rater_id == rater.id))
    return rater


def judge(*, session: Session, log: ClickLog, book: Book, body: JudgementsBody) -> JudgementsResult:
    """Fit the model to the log and write one judgement per pair with enough impressions."""
    _check(body, book)
    loaded = impressions.load(
        session=session, log=log, actions=body.actions, window=body, max_rank=body.max_rank
    )
    fit = _fit(loaded, body)
    fits = [
        i
        for i in np.flatnonzero(fit.impressions >= body.min_impressions)
        if 0 < len(loaded.pairs[i][0]) <= MAX_TEXT and 0 < len(loaded.pairs[i][1]) <= MAX_DOC
    ]
    chosen = np.array(fits, dtype=np.int64)
    ratings = to_scale(fit.estimate[chosen], book.scale, thresholds=body.thresholds)
    rater = _rater(session, book, log, body)
    ids, created = _pair_ids(session, book, [loaded.pairs[i] for i in fits])
    rows = [
        {
            "rater_id": rater.id,
            "book_id": book.id,
            "pair_id": ids[loaded.pairs[i]],
            "rating": float(rating),
            "impressions": int(fit.impressions[i]),
            "clicks": int(fit.clicks[i]),
            "expected_clicks": float(fit.expected_clicks[i]),
            "estimate": float(fit.estimate[i]),
            "ci_low": float(fit.ci_low[i]),
            "ci_high": float(fit.ci_high[i]) if np.isfinite(fit.ci_high[i]) else None,
        }
        for i, rating in zip(fits, ratings.tolist(), strict=True)
    ]
    for start in range(0, len(rows), CHUNK):
        # The table, not the entity: a Core executemany skips the ORM's bulk bookkeeping.
        session.execute(insert(JUDGEMENTS), rows[start : start + CHUNK])
    session.flush()
    counts = Counter(f"{r:g}" for r in ratings.tolist())
    return JudgementsResult(
        rater=RaterRef(kind="clicks", id=rater.id, name=rater.name),
        model=body.model,
        impressions=loaded.source,
        pairs_seen=fit.impressions.size,
        pairs_judged=len(rows),
        pairs_below_minimum=int((fit.impressions < body.min_impressions).sum()),
        pairs_created=created,
        ratings=dict(sorted(counts.items())),
    )


def estimate(*, session: Session, log: ClickLog, body: EstimateQuery) -> JudgementsEstimate:
    """Return how many pairs have at least `min_impressions` impressions (what a model judges)."""
    loaded = impressions.load(
        session=session, log=log, actions=DEFAULT_ACTIONS, window=body, max_rank=body.max_rank
    )
    data = loaded.impressions
    shown = np.bincount(data.pair, minlength=data.n_pairs)
    fits = sum(
        1
        for i in np.flatnonzero(shown >= body.min_impressions)
        if 0 < len(loaded.pairs[i][0]) <= MAX_TEXT and 0 < len(loaded.pairs[i][1]) <= MAX_DOC
    )
    return JudgementsEstimate(
        impressions=loaded.source,
        min_impressions=body.min_impressions,
        max_rank=body.max_rank,
        pairs_seen=int(data.n_pairs),
        pairs_qualifying=fits,
    )
