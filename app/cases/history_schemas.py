"""Score history of a query across the case's finished runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from app.bodies import ResponseBody
from app.vocabulary import QueryStatus


class QueryScorePoint(ResponseBody):
    run_id: int
    score: float | None = Field(description="The query's stored score in that run")


class QueryHistoryPoint(QueryScorePoint):
    try_number: int
    status: QueryStatus | None = Field(description="Null when the query was not in that run")
    finished_at: datetime | None
    knobs: dict[str, Any] | None = Field(
        default=None, description="Knob values the run searched with (its own, else its try's)"
    )


class QueryHistory(ResponseBody):
    case_id: int
    query_id: int
    text: str
    metric: int | None = Field(
        default=None, description="The scorer id whose scores these are; null: the primary"
    )
    metric_names: dict[int, str] = Field(
        default_factory=dict, description="The case's metrics (scorer id: name), primary first"
    )
    points: list[QueryHistoryPoint] = Field(description="Finished runs, oldest first")
