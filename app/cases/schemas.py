"""Case and try bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from app.bodies import Body, Name, Options, Out, TeamIds
from app.schedules.schemas import ScheduleBody
from app.search.models import DEFAULT_FIELD_SPEC

Knobs = dict[str, float]
MAX_ROWS = 500
# Extra metrics (API.md): the case's scorers besides its primary one.
MAX_METRICS = 12
Aggregate = Literal["mean", "weighted_mean"]
MetricScorerIds = Annotated[list[int], Field(max_length=MAX_METRICS)]


class CaseCreate(Body):
    name: Name
    search_endpoint_id: int
    query_template: str = Field(min_length=1, max_length=50_000)
    scorer_id: int | None = None
    field_spec: str = Field(default=DEFAULT_FIELD_SPEC, min_length=1, max_length=2000)
    rows: int = Field(default=10, ge=1, le=MAX_ROWS)
    options: Options = Field(default_factory=dict)
    knobs: Knobs = Field(default_factory=dict)
    team_ids: TeamIds = Field(default_factory=list)
    metric_scorer_ids: MetricScorerIds = Field(default_factory=list)
    aggregate: Aggregate = "mean"
    # Run on a cron schedule in UTC (app/schedules).
    schedule: ScheduleBody | None = None


class CaseUpdate(Body):
    name: Name | None = None
    search_endpoint_id: int | None = None
    query_template: str | None = Field(default=None, min_length=1, max_length=50_000)
    scorer_id: int | None = None
    field_spec: str | None = Field(default=None, min_length=1, max_length=2000)
    rows: int | None = Field(default=None, ge=1, le=MAX_ROWS)
    options: Options | None = None
    knobs: Knobs | None = None
    team_ids: TeamIds | None = None
    metric_scorer_ids: MetricScorerIds | None = None
    aggregate: Aggregate | None = None
    # A new schedule, or null to stop running on one.
    schedule: ScheduleBody | None = None


class CaseRead(Out):
    id: int
    name: str
    search_endpoint_id: int
    scorer_id: int
    query_template: str
    field_spec: str
    rows: int
    options: Options
    knobs: Knobs
    try_number: int
    query_count: int = 0
    last_score: float | None = None
    last_run_at: datetime | None = None
    team_ids: list[int] = Field(default_factory=list)
    metric_scorer_ids: list[int] = Field(default_factory=list)
    aggregate: Aggregate = "mean"
    schedule: ScheduleBody | None = None
    next_run_at: datetime | None = None


class TryRead(Out):
    number: int
    search_endpoint_id: int
    query_template: str
    field_spec: str
    rows: int
    knobs: Knobs
    created_at: datetime
