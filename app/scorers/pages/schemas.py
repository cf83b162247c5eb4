"""The scorers list page and the scorer editor, as JSON (the page twins of the HTML)."""

from __future__ import annotations

from pydantic import Field

from app.bodies import ResponseBody
from app.scorers.schemas import ScorerRead
from app.vocabulary import QueryStatus


class ScorersPage(ResponseBody):
    presets: list[ScorerRead]
    own: list[ScorerRead]


class TryQueryOption(ResponseBody):
    id: int
    text: str


class TryCase(ResponseBody):
    id: int
    name: str
    queries: list[TryQueryOption] = Field(description="The case's first queries, by position")


class ScorerPage(ResponseBody):
    scorer: ScorerRead | None
    try_cases: list[TryCase]


class TryOutcome(ResponseBody):
    query_id: int
    text: str
    status: QueryStatus
    score: float | None
    raw_score: float | None
    reason: str | None
    log: list[str]
    run_id: int | None
