"""Builders of the scoring tests: scales, queries and validated configs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.scoring import QueryInput, ScoreDoc, ScorerConfig, validate_scorer

GRADED = (0, 1, 2, 3)
CLASSIC_SCALE = tuple(range(1, 11))


def query(ids: Sequence[str], ratings: Mapping[str, float], **extra: Any) -> QueryInput:
    """Return a query whose docs are the given ids, in order."""
    return QueryInput(docs=[ScoreDoc(id=i) for i in ids], ratings=dict(ratings), **extra)


def config(
    kind: str, params: Mapping[str, Any] | None = None, scale: Sequence[float] = GRADED, **kw: Any
) -> ScorerConfig:
    """Return a validated config."""
    return validate_scorer(
        kind=kind,
        params=params,
        scale=scale,
        scale_labels=kw.get("scale_labels"),
        code=kw.get("code"),
        max_score=kw.get("max_score"),
        environment=kw.get("environment"),
    )
