"""What a scorer should make of a ranking, computed apart from the code under test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.scorers.config import build_config
from app.scoring import Outcome, QueryInput, ScoreDoc, score_query
from tests.fixtures.users import ApiUser


def expected_outcome(
    api: ApiUser, scorer: str, docs: Sequence[str], ratings: Mapping[str, float]
) -> Outcome:
    """Score the ranking ``docs`` with the preset named ``scorer``, as the API lists it,
    straight through the scoring library."""
    preset = next(s for s in api.get("/api/v1/scorers").json() if s["name"] == scorer)
    config = build_config(
        kind=preset["kind"],
        params=preset["params"],
        scale=preset["scale"],
        scale_labels=None,
        code=None,
        max_score=None,
    )
    return score_query(config, QueryInput(docs=[ScoreDoc(id=d) for d in docs], ratings=ratings))
