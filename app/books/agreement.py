"""How much raters agree.

The statistics come from the libraries (`krippendorff`, scikit-learn); this module only
arranges the judgements for them and turns undefined results into None.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import Integer, func, select
from sqlalchemy.orm import Session

from app.books.schemas import AgreementRead, KappaRead
from app.judges.titles import pair_title, title_fields
from app.models import Book, Judgement, Pair, User

DISPUTED_LIMIT = 10


@dataclass(frozen=True)
class RaterCount:
    user_id: int
    email: str
    judged: int
    unrateable: int


@dataclass(frozen=True)
class Disputed:
    pair_id: int
    query_text: str
    doc_id: str
    ratings: list[float]
    spread: float
    doc_title: str | None = None


def numeric_judgements(*, session: Session, book: Book) -> list[tuple[int, int, float]]:
    """Return (pair id, user id, rating) of every rated judgement ("can't tell" left out)."""
    stmt = select(Judgement.pair_id, Judgement.user_id, Judgement.rating).where(
        Judgement.book_id == book.id, Judgement.rating.is_not(None)
    )
    return [(p, u, float(r or 0.0)) for p, u, r in session.execute(stmt)]


def agreement_of(
    judgements: Sequence[tuple[int, int, float]], scale: Sequence[float]
) -> AgreementRead:
    """Return alpha (ordinal) over all raters and kappa per pair of raters for these judgements."""
    raters = sorted({u for _, u, _ in judgements})
    pair_ids = sorted({p for p, _, _ in judgements})
    row = {u: i for i, u in enumerate(raters)}
    col = {p: i for i, p in enumerate(pair_ids)}
    matrix = np.full((len(raters), len(pair_ids)), np.nan)
    for pair_id, user_id, rating in judgements:
        matrix[row[user_id], col[pair_id]] = rating
    judged = (~np.isnan(matrix)).sum(axis=0)
    multi = int((judged >= 2).sum())
    kappas = [_kappa(a, b, matrix[row[a]], matrix[row[b]]) for a, b in combinations(raters, 2)]
    return AgreementRead(
        raters=len(raters),
        pairs=len(pair_ids),
        pairs_multi=multi,
        krippendorff_alpha=_alpha(matrix, scale) if multi else None,
        cohen_kappa=kappas,
    )


def _alpha(matrix: np.ndarray, scale: Sequence[float]) -> float | None:
    domain = sorted({float(v) for v in scale} | set(np.unique(matrix[~np.isnan(matrix)])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = krippendorff.alpha(
                reliability_data=matrix, level_of_measurement="ordinal", value_domain=domain
            )
        except (ValueError, ZeroDivisionError):
            return None
    return _defined(float(value))


def _kappa(a: int, b: int, ratings_a: np.ndarray, ratings_b: np.ndarray) -> KappaRead:
    both = ~np.isnan(ratings_a) & ~np.isnan(ratings_b)
    n = int(both.sum())
    if n == 0:
        return KappaRead(a=a, b=b, n=0, kappa=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = cohen_kappa_score(ratings_a[both], ratings_b[both])
        except ValueError:
            return KappaRead(a=a, b=b, n=n, kappa=None)
    return KappaRead(a=a, b=b, n=n, kappa=_defined(float(value)))


def _defined(value: float) -> float | None:
    return value if math.isfinite(value) else None


def agreement(*, session: Session, book: Book) -> AgreementRead:
    """Return the agreement of the book's raters (numeric judgements only)."""
    return agreement_of(numeric_judgements(session=session, book=book), book.scale)


def rater_counts(*, session: Session, book: Book) -> list[RaterCount]:
    """Return each rater's number of judgements and of "can't tell", by email."""
    unrateable = func.sum(Judgement.unrateable.cast(Integer))
    stmt = (
        select(Judgement.user_id, User.email, func.count(), unrateable)
        .join(User, User.id == Judgement.user_id)
        .where(Judgement.book_id == book.id)
        .group_by(Judgement.user_id, User.email)
        .order_by(User.email)
    )
    return [
        RaterCount(user_id=u, email=e, judged=int(n), unrateable=int(x or 0))
        for u, e, n, x in session.execute(stmt)
    ]


def disputed_pairs(*, session: Session, book: Book, limit: int = DISPUTED_LIMIT) -> list[Disputed]:
    """Return the pairs whose numeric judgements disagree most: widest range first."""
    spread = func.max(Judgement.rating) - func.min(Judgement.rating)
    stmt = (
        select(Judgement.pair_id)
        .where(Judgement.book_id == book.id, Judgement.rating.is_not(None))
        .group_by(Judgement.pair_id)
        .having(func.count() >= 2, spread > 0)
        .order_by(spread.desc(), Judgement.pair_id)
        .limit(limit)
    )
    ids = list(session.scalars(stmt))
    if not ids:
        return []
    ratings: dict[int, list[float]] = {i: [] for i in ids}
    for pair_id, rating in session.execute(
        select(Judgement.pair_id, Judgement.rating).where(
            Judgement.pair_id.in_(ids), Judgement.rating.is_not(None)
        )
    ):
        ratings[pair_id].append(float(rating or 0.0))
    pairs: Mapping[int, Pair] = {
        p.id: p for p in session.scalars(select(Pair).where(Pair.id.in_(ids)))
    }
    names = title_fields(session=session, book_id=book.id)
    return [
        Disputed(
            pair_id=i,
            query_text=pairs[i].query_text,
            doc_id=pairs[i].doc_id,
            ratings=sorted(ratings[i]),
            spread=max(ratings[i]) - min(ratings[i]),
            doc_title=pair_title(pairs[i].fields, names),
        )
        for i in ids
    ]
