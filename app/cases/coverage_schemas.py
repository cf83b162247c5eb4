"""Judgement coverage of a case: unrated docs in the top k and the score band they leave open."""

from __future__ import annotations

from pydantic import Field

from app.bodies import ResponseBody
from app.vocabulary import QueryStatus


class QueryCoverage(ResponseBody):
    query_id: int
    text: str
    status: QueryStatus
    score: float | None = Field(description="Score of the latest finished run, current ratings")
    unrated: int = Field(description="Unrated docs in the top k")
    unrated_ids: list[str]
    score_min: float | None = Field(description="Score with every unrated top-k doc lowest")
    score_max: float | None = Field(description="Score with every unrated top-k doc highest")


class RateNext(ResponseBody):
    query_id: int
    text: str
    doc_id: str
    title: str | None
    rank: int
    points: float = Field(description="How far rating this doc could move the case score")


class CaseCoverage(ResponseBody):
    case_id: int
    run_id: int | None = Field(description="The latest finished run; null when there is none")
    k: int
    scale_min: float
    scale_max: float
    case_score: float | None
    case_score_min: float | None
    case_score_max: float | None
    unrated: int = Field(description="Unrated docs in the top k over every query")
    queries_with_unrated: int
    queries: list[QueryCoverage] = Field(description="Most unrated first")
    rate_next: list[RateNext] = Field(description="Biggest possible move of the case score first")
