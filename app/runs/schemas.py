"""Run bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from app.bodies import Body, Out
from app.vocabulary import QueryStatus, RunStatus


class RunCreate(Body):
    try_number: int | None = Field(default=None, ge=1)
    explain: bool = False


class RunStarted(Out):
    id: int
    status: RunStatus


class RunSummary(Out):
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


class RunDocRead(Out):
    id: str
    rank: int
    rating: float | None
    fields: dict[str, Any]
    explain: Any | None = None


class RunQueryRead(Out):
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


class RunProgress(Out):
    done: int
    total: int


class RunDetail(RunSummary):
    progress: RunProgress
    queries: list[RunQueryRead]
