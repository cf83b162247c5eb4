"""Run bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.bodies import RequestBody, ResponseBody
from app.vocabulary import QueryStatus, RunStatus


class RunCreate(RequestBody):
    try_number: int | None = Field(default=None, ge=1)
    explain: bool = False


class RunStarted(ResponseBody):
    id: int
    status: RunStatus


class RecordedMetric(ResponseBody):
    scorer_id: int
    name: str
    case_score: float | None
    scored: int


class RunSummary(ResponseBody):
    id: int
    try_number: int
    scorer_id: int | None
    status: RunStatus
    explain: bool = False
    case_score: float | None
    started_at: datetime | None
    finished_at: datetime | None
    scored: int
    unscored: int
    errors: int
    total: int
    done: int
    error: str | None
    knobs: dict[str, float] | None = Field(
        default=None, description="Knob values this run used instead of its try's (a sweep's)"
    )
    sweep_id: int | None = None
    recorded_score: float | None = Field(
        default=None,
        description="The case score when the run finished, never changed afterwards "
        "(case_score follows re-scoring with today's ratings and the case's scorer)",
    )
    recorded_scorer_id: int | None = Field(
        default=None, description="The scorer that produced recorded_score"
    )
    recorded_metrics: list[RecordedMetric] | None = Field(
        default=None,
        description="Every metric's case score when the run finished, never changed "
        "afterwards (null for a run of one metric)",
    )
    recorded_aggregate: Literal["mean", "weighted_mean"] | None = Field(
        default=None,
        description='The case\'s aggregate when the run finished ("mean" or "weighted_mean"): '
        "how recorded_score and recorded_metrics averaged the queries, never changed "
        "afterwards (null for a run that finished before Relevo recorded it, or has not "
        "finished); case_score follows the case's aggregate of today",
    )
    trigger: str = Field(
        default="user",
        description='What started it: "user", "api", "schedule", "sweep", "apply" or "agent"',
    )
    agent: str | None = Field(
        default=None, description="The name of the API key of the agent that started it"
    )
    query_template: str | None = Field(
        default=None,
        description="A draft's template (an agent's proposed try), searched instead of its "
        "try's; null for every other run",
    )


class RunDocRead(ResponseBody):
    id: str
    rank: int
    rating: float | None
    fields: dict[str, Any]
    explain: Any | None = None


class RunQueryRead(ResponseBody):
    query_id: int | None
    text: str
    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    error: str | None
    num_found: int | None
    duration_ms: float | None
    docs: list[RunDocRead]
    metric_scores: dict[str, float | None] = Field(
        default_factory=dict, description="Every metric's score of the query, by scorer id"
    )


class TagRead(ResponseBody):
    tag: str
    count: int
    mean: float | None
    min: float | None


class MetricRead(ResponseBody):
    scorer_id: int
    name: str
    case_score: float | None
    scored: int
    by_tag: list[TagRead] = Field(default_factory=list)


class RunProgress(ResponseBody):
    done: int
    total: int


class RunDetail(RunSummary):
    progress: RunProgress
    queries: list[RunQueryRead]
    metrics: list[MetricRead] = Field(
        default_factory=list, description="Every metric of the run, the primary first"
    )
