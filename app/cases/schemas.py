"""Case and try bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, AllowInfNan, Field

from app.bodies import Name, Options, RequestBody, ResponseBody, TeamIds, UtcTime
from app.search.types import DEFAULT_FIELD_SPEC

Knobs = dict[str, float]
# A knob is a boost, a weight, a slop, a fuzziness or a size: engines refuse negative ones
# (at run time, query by query), and a value past a billion is a typo that no engine means.
MAX_KNOB = 1e9
KNOB_RANGE = f"a number from 0 to {MAX_KNOB:,.0f}"


def _in_knob_range(value: float) -> float:
    if not 0 <= value <= MAX_KNOB:
        raise ValueError(f"a knob is {KNOB_RANGE}, not {value:g}")
    return value


KnobValue = Annotated[float, AllowInfNan(False), AfterValidator(_in_knob_range)]
KnobsIn = dict[str, KnobValue]


def _unix_lines(text: str) -> str:
    # A browser posts a textarea with CRLF line ends: the same template typed again must
    # stay the same template (no new try, no "query template changed").
    return text.replace("\r\n", "\n").replace("\r", "\n")


Template = Annotated[str, AfterValidator(_unix_lines), Field(min_length=1, max_length=50_000)]
MAX_ROWS = 500
# Extra metrics (API.md): the case's scorers besides its primary one.
MAX_METRICS = 12
Aggregate = Literal["mean", "weighted_mean"]
MetricScorerIds = Annotated[list[int], Field(max_length=MAX_METRICS)]


class ScheduleBody(RequestBody):
    cron: str = Field(min_length=1, max_length=100, description="5 cron fields in UTC or a preset")
    try_number: int | None = Field(default=None, ge=1, le=2**31 - 1)


class CaseCreate(RequestBody):
    name: Name
    search_endpoint_id: int
    query_template: Template
    scorer_id: int | None = None
    field_spec: str = Field(default=DEFAULT_FIELD_SPEC, min_length=1, max_length=2000)
    rows: int = Field(default=10, ge=1, le=MAX_ROWS)
    options: Options = Field(default_factory=dict)
    knobs: KnobsIn = Field(default_factory=dict)
    team_ids: TeamIds = Field(default_factory=list)
    metric_scorer_ids: MetricScorerIds = Field(default_factory=list)
    aggregate: Aggregate = "mean"
    # Run on a cron schedule in UTC (app/schedules).
    schedule: ScheduleBody | None = None


class CaseUpdate(RequestBody):
    name: Name | None = None
    search_endpoint_id: int | None = None
    query_template: Template | None = None
    scorer_id: int | None = None
    field_spec: str | None = Field(default=None, min_length=1, max_length=2000)
    rows: int | None = Field(default=None, ge=1, le=MAX_ROWS)
    options: Options | None = None
    knobs: KnobsIn | None = None
    team_ids: TeamIds | None = None
    metric_scorer_ids: MetricScorerIds | None = None
    aggregate: Aggregate | None = None
    # A new schedule, or null to stop running on one.
    schedule: ScheduleBody | None = None


class CaseRead(ResponseBody):
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


class TryRead(ResponseBody):
    number: int
    search_endpoint_id: int
    query_template: str
    field_spec: str
    rows: int
    knobs: Knobs
    created_at: datetime


class AnnotationCreate(RequestBody):
    text: str = Field(min_length=1, max_length=2000)
    at: UtcTime | None = None
    run_id: int | None = Field(default=None, ge=1, le=2**31 - 1)


class AnnotationUpdate(RequestBody):
    text: str | None = Field(default=None, min_length=1, max_length=2000)
    at: UtcTime | None = None


class AnnotationRead(ResponseBody):
    id: int
    case_id: int
    text: str
    at: datetime
    run_id: int | None
    auto: bool
    agent: str | None = Field(
        default=None,
        description="The name of the API key of the agent that wrote it (trigger agent)",
    )
    near_run_id: int | None = Field(
        default=None,
        description="The ended run the note's marker sits on in the history: its run, else "
        "the first run that ended at or after its time (null: none yet)",
    )
