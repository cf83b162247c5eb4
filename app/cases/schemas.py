"""Case, query and rating bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from app.bodies import Body, Name, Options, Out, QueryText, TeamIds
from app.queries.bulk_lines import BulkLineError, parse_line
from app.schedules.schemas import ScheduleBody
from app.search.models import DEFAULT_FIELD_SPEC

Knobs = dict[str, float]
MAX_ROWS = 500
# Metrics, tags and weights (API.md): extra scorers of a case, a query's segment labels.
MAX_METRICS = 12
MAX_TAGS = 20
Aggregate = Literal["mean", "weighted_mean"]
Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
MetricScorerIds = Annotated[list[int], Field(max_length=MAX_METRICS)]
# A query's weight (e.g. its share of traffic): positive and finite.
Weight = Annotated[float, Field(gt=0, le=1e12)]


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


# The longest notes or information need a query keeps.
NOTES_MAX_LENGTH = 20_000


class QueryCreate(Body):
    text: QueryText
    notes: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    information_need: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    options: Options = Field(default_factory=dict)
    tags: Tags = Field(default_factory=list)
    weight: Weight = 1.0


class QueryUpdate(Body):
    text: QueryText | None = None
    notes: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    information_need: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    options: Options | None = None
    position: int | None = Field(default=None, ge=0, le=2**31 - 1)
    tags: Tags | None = None
    weight: Weight | None = None


class QueryRead(Out):
    id: int
    text: str
    position: int
    notes: str | None
    information_need: str | None
    options: Options
    tags: list[str] = Field(default_factory=list)
    weight: float = 1.0


class QueriesPatch(Body):
    """Edit many queries of a case at once: add or remove tags, set one weight."""

    query_ids: list[int] = Field(min_length=1, max_length=20_000)
    add_tags: Tags = Field(default_factory=list)
    remove_tags: Tags = Field(default_factory=list)
    weight: Weight | None = None


class BulkQueries(Body):
    queries: list[str] = Field(max_length=20_000)

    @field_validator("queries")
    @classmethod
    def _texts(cls, values: list[str]) -> list[str]:
        for index, text in enumerate(values):
            try:
                parse_line(text)
            except BulkLineError as exc:
                raise ValueError(f"query {index}: {exc}") from None
        return values


class BulkQueriesRead(Out):
    queries: list[QueryRead]


class RatingIn(Body):
    doc_id: str = Field(min_length=1, max_length=500)
    rating: float | None


class RatingsPut(Body):
    ratings: list[RatingIn] = Field(max_length=10_000)


class RaterRead(Out):
    user_id: int
    email: str


class RatingRead(Out):
    doc_id: str
    rating: float
    # Who set the rating last and when (null for ratings older than that record).
    rated_by: RaterRead | None = None
    rated_at: datetime | None = None


class RatingsRead(Out):
    ratings: list[RatingRead]


class QueryScore(Out):
    run_id: int
    status: str
    score: float | None
    raw_score: float | None
    reason: str | None


class RatingsChanged(Out):
    ratings: list[RatingRead]
    query_score: QueryScore | None
    case_score: float | None
