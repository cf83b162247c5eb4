"""Page models of one query: its results and its rated docs the run did not return, each
also served as its JSON twin."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.bodies import ResponseBody
from app.queries.schemas import QueryRead
from app.scorers.schemas import ScaleEntry
from app.vocabulary import QueryStatus


class DocField(ResponseBody):
    name: str
    value: str


class ResultDoc(ResponseBody):
    id: str
    rank: int
    title: str | None
    fields: list[DocField]
    images: list[str]
    rating: float | None
    explain: Any | None = None
    rated_by: str | None = Field(default=None, description="email of who set the rating")
    off_scale: bool = Field(default=False, description="The rating is not on the scorer's scale")


class QueryResults(ResponseBody):
    case_id: int
    query: QueryRead
    run_id: int | None
    status: QueryStatus | None
    score: float | None
    num_found: int | None
    reason: str | None
    error: str | None
    unrated_top_k: int | None
    docs: list[ResultDoc]
    scale: list[ScaleEntry]
    off_scale: list[str] = Field(
        default_factory=list, description="Ids of shown docs rated outside the scorer's scale"
    )
    rated_not_returned: int = Field(
        default=0, description="Docs rated for the query that the run did not return"
    )


class RatedMissing(ResponseBody):
    """Docs rated for a query that its latest run did not return, fetched by id."""

    case_id: int
    query_id: int
    run_id: int | None
    total: int = Field(description="Rated docs the run did not return")
    docs: list[ResultDoc] = Field(description="Those the engine still has, in rating order")
    not_found: list[ResultDoc] = Field(description="Those the engine no longer has")
    not_fetched: int = Field(description="Beyond the lookup limit, neither fetched nor listed")
    error: str | None = Field(description="Why the engine could not be asked, if it could not")
    scale: list[ScaleEntry]
