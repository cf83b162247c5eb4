"""Comparison of two runs (or a run with the current ratings): the compare page and its twin."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.schemas.common import Out
from app.schemas.runs import QueryStatus

CompareSort = Literal["delta", "text", "position"]
COMPARE_SORTS: tuple[CompareSort, ...] = ("delta", "text", "position")
Change = Literal["improved", "worsened", "unchanged", "incomparable", "only_base", "only_other"]


class CompareSide(Out):
    run_id: int
    try_number: int
    current_ratings: bool = Field(
        description="Scored with the current ratings; false: the run's stored scores"
    )
    case_score: float | None = Field(description="Mean of the scored queries")
    scored: int
    unscored: int
    errors: int


class DocChange(Out):
    id: str
    title: str | None
    rank: int = Field(description="Rank in the run the doc is in the top k of")
    rating: float | None = Field(description="Current rating of the doc for this query")


class QueryComparison(Out):
    query_id: int
    text: str
    position: int
    base_status: QueryStatus | None = Field(description="Null when the query is not in base")
    base_score: float | None
    other_status: QueryStatus | None = Field(description="Null when the query is not in other")
    other_score: float | None
    delta: float | None = Field(description="other - base; null unless both are scored")
    change: Change
    entered: list[DocChange] = Field(description="Docs in other's top k but not in base's")
    left: list[DocChange] = Field(description="Docs in base's top k but not in other's")


class CompareCounts(Out):
    improved: int
    worsened: int
    unchanged: int
    incomparable: int = Field(description="In both runs, but not scored in at least one")
    only_base: int
    only_other: int
    only_in_one: int = Field(description="only_base + only_other")


class RunComparison(Out):
    case_id: int
    scorer_id: int
    scorer_name: str
    k: int = Field(description="Depth of the top whose entries and exits are listed")
    sort: CompareSort
    base: CompareSide
    other: CompareSide
    case_score_delta: float | None = Field(description="other - base case score")
    counts: CompareCounts
    queries: list[QueryComparison]
