"""Click log bodies: the log itself, what an ingest stored and refused, the log's summary."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from app.bodies import Body, Name, Out, TeamIds

PositionBase = Literal[0, 1]
MAX_REFUSED = 100  # refusals listed in one answer; the count is always whole


class ClickLogCreate(Body):
    name: Name
    position_base: PositionBase = 1
    team_ids: TeamIds = Field(default_factory=list)


class ClickLogUpdate(Body):
    name: Name | None = None
    position_base: PositionBase | None = None
    team_ids: TeamIds | None = None


class ClickLogRead(Out):
    id: int
    name: str
    owner_id: int
    position_base: int
    created_at: datetime
    team_ids: list[int] = Field(default_factory=list)


class Refusal(Out):
    line: int
    message: str


class IngestResult(Out):
    """`stored` new records; `duplicates` already stored; `refused` the first 100 bad ones."""

    stored: int = 0
    duplicates: int = 0
    refused_count: int = 0
    refused: list[Refusal] = Field(default_factory=list)


class ClickLogSummary(Out):
    queries: int
    events: int
    by_action: dict[str, int]
    distinct_queries: int
    first_at: datetime | None
    last_at: datetime | None
    impressions: Literal["events", "hit_ids", "none"]
