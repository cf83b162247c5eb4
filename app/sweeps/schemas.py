"""Knob sweeps: a grid of knob values, each combination an ordinary run of the case."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, Strict

from app.bodies import RequestBody, ResponseBody
from app.cases.schemas import KnobValue as CaseKnob
from app.runs.schemas import RecordedMetric
from app.vocabulary import RunStatus

MAX_COMBINATIONS = 100
# The case's bounds on a knob (0 to a billion), and a JSON number, not a string.
KnobValue = Annotated[CaseKnob, Strict()]


class SweepCreate(RequestBody):
    knobs: dict[str, Annotated[list[KnobValue], Field(min_length=1, max_length=100)]] = Field(
        description="Values to try per knob of the template; unlisted knobs keep their value",
        min_length=1,
    )


class SweepApply(RequestBody):
    run_id: int
    confirm_partial: bool = Field(
        default=False,
        description="Required to apply a run that is not complete (errors or unscored queries)",
    )


class SweepStarted(ResponseBody):
    id: int
    status: RunStatus


class SweepResult(ResponseBody):
    knobs: dict[str, float] = Field(description="Every knob value the run used")
    run_id: int
    status: RunStatus
    case_score: float | None = Field(
        description=(
            "The primary metric's case score: the case's aggregate (mean or weighted mean) of "
            "the scored queries, re-scored with today's ratings and settings (SCORING.md)"
        )
    )
    scored: int = Field(default=0, description="Queries the case score is the mean of")
    unscored: int = 0
    errors: int = Field(default=0, description="Queries whose engine call or scorer failed")
    total: int = Field(default=0, description="Queries in the run")
    complete: bool = Field(
        default=False,
        description="Finished with every query scored: only a complete run can be the best",
    )
    metrics: list[RecordedMetric] = Field(
        default_factory=list,
        description=(
            "The case's other metrics, re-scored with today's ratings and settings like "
            "case_score (the primary, case_score, is left out)"
        ),
    )


class SweepRead(ResponseBody):
    id: int
    case_id: int
    status: RunStatus
    try_number: int
    grid: dict[str, list[float]]
    total: int = Field(description="Number of combinations")
    done: int = Field(description="Combinations whose run has ended")
    results: list[SweepResult]
    best: SweepResult | None = Field(
        description="Highest case score among complete runs (see best_note when none can be)"
    )
    best_note: str | None = Field(
        default=None,
        description=(
            "Why there is no best while some combination has ended; or, with a best, that "
            "no run scored every query and the best was chosen among the runs that left out "
            "only the queries every run left out (unrated ones, say)"
        ),
    )
    metric: str | None = Field(
        default=None, description="The case's primary metric, the metric of case_score"
    )
    aggregate: str = Field(
        default="mean", description='How the scores average the queries: "mean" or "weighted_mean"'
    )
    created_at: datetime
    finished_at: datetime | None
