"""A scorer's scoring config: validated from its fields (a bad value is a 422 naming its field)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.errors import Invalid
from app.models import Scorer
from app.scoring import ScorerConfig, ScorerConfigError, validate_scorer

__all__ = ["build_config", "config_of"]


def build_config(
    *,
    kind: str,
    params: Mapping[str, Any] | None,
    scale: list[float],
    scale_labels: Mapping[str, str] | None,
    code: str | None,
    max_score: float | None,
    environment: str | None = None,
) -> ScorerConfig:
    """Return a validated scorer config; a bad value is a 422 naming its field."""
    try:
        return validate_scorer(
            kind=kind,
            params=params,
            scale=scale,
            scale_labels=scale_labels,
            code=code,
            max_score=max_score,
            environment=environment,
        )
    except ScorerConfigError as exc:
        raise Invalid(exc.field, exc.message) from exc


def config_of(scorer: Scorer) -> ScorerConfig:
    """Return the scoring config of a stored scorer."""
    return build_config(
        kind=scorer.kind,
        params=scorer.params,
        scale=list(scorer.scale),
        scale_labels=scorer.scale_labels,
        code=scorer.code,
        max_score=scorer.max_score,
        environment=scorer.environment,
    )
