"""Scorer bodies and stateless scoring."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from app.bodies import Name, RequestBody, ResponseBody, TeamIds
from app.vocabulary import QueryStatus, ScorerKind

# What a JavaScript scorer's code runs in: Relevo's documented helpers, or Quepid's
# (the numbers Quepid's browser shows, its quirks included).
Environment = Literal["relevo", "quepid"]


class ScorerCreate(RequestBody):
    name: Name
    kind: ScorerKind
    code: str | None = Field(default=None, max_length=100_000)
    params: dict[str, Any] | None = None
    scale: list[float] = Field(min_length=1, max_length=11)
    scale_labels: dict[str, str] | None = None
    max_score: float | None = None
    environment: Environment | None = None
    team_ids: TeamIds = Field(default_factory=list)


class ScorerUpdate(RequestBody):
    name: Name | None = None
    code: str | None = Field(default=None, max_length=100_000)
    params: dict[str, Any] | None = None
    scale: list[float] | None = Field(default=None, min_length=1, max_length=11)
    scale_labels: dict[str, str] | None = None
    max_score: float | None = None
    environment: Environment | None = None
    team_ids: TeamIds | None = None


class ScorerRead(ResponseBody):
    id: int
    name: str
    kind: ScorerKind
    params: dict[str, Any]
    code: str | None
    scale: list[float]
    scale_labels: dict[str, str] | None
    max_score: float
    environment: str = Field(
        default="relevo", description='JavaScript scorers: "relevo" or "quepid"'
    )
    builtin: bool
    team_ids: list[int] = Field(default_factory=list)


class ScoreRequest(RequestBody):
    scorer_id: int | None = None
    scorer: ScorerCreate | None = None
    docs: list[str] = Field(max_length=10_000)
    ratings: dict[str, float | None] = Field(default_factory=dict)
    num_found: int | None = Field(default=None, ge=0)
    options: dict[str, Any] = Field(default_factory=dict)
    query_text: str = Field(default="", max_length=1000)

    @model_validator(mode="after")
    def _one_scorer(self) -> ScoreRequest:
        if (self.scorer_id is None) == (self.scorer is None):
            raise ValueError("give exactly one of scorer_id and scorer")
        return self


class ScoreResult(ResponseBody):
    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    log: list[str]


class ScorerOption(ResponseBody):
    """A scorer to choose in a form."""

    id: int
    name: str
    builtin: bool


class ScaleEntry(ResponseBody):
    """One rating of a scale, as the rating buttons show it."""

    value: float
    label: str
    digit: int | None = Field(description="Keyboard digit that gives this rating, if any")
