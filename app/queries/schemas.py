"""A case's query and rating bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, StringConstraints, field_validator

from app.bodies import Options, QueryText, RequestBody, ResponseBody
from app.queries.bulk_lines import BulkLineError, parse_line

# Tags and weights (API.md): a query's segment labels and its share of the case score.
MAX_TAGS = 20
Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
# A query's weight (e.g. its share of traffic): positive and finite.
Weight = Annotated[float, Field(gt=0, le=1e12)]

# The longest notes or information need a query keeps.
NOTES_MAX_LENGTH = 20_000


class QueryCreate(RequestBody):
    text: QueryText
    notes: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    information_need: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    options: Options = Field(default_factory=dict)
    tags: Tags = Field(default_factory=list)
    weight: Weight = 1.0


class QueryUpdate(RequestBody):
    text: QueryText | None = None
    notes: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    information_need: str | None = Field(default=None, max_length=NOTES_MAX_LENGTH)
    options: Options | None = None
    position: int | None = Field(default=None, ge=0, le=2**31 - 1)
    tags: Tags | None = None
    weight: Weight | None = None


class QueryRead(ResponseBody):
    id: int
    text: str
    position: int
    notes: str | None
    information_need: str | None
    options: Options
    tags: list[str] = Field(default_factory=list)
    weight: float = 1.0
    # Sampled from a click log: its inclusion probability under the sample's design.
    inclusion_probability: float | None = None


class QueriesPatch(RequestBody):
    """Edit many queries of a case at once: add or remove tags, set one weight."""

    query_ids: list[int] = Field(min_length=1, max_length=20_000)
    add_tags: Tags = Field(default_factory=list)
    remove_tags: Tags = Field(default_factory=list)
    weight: Weight | None = None


class BulkQueries(RequestBody):
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


class BulkQueriesRead(ResponseBody):
    queries: list[QueryRead]


class RatingIn(RequestBody):
    doc_id: str = Field(min_length=1, max_length=500)
    rating: float | None


class RatingsPut(RequestBody):
    ratings: list[RatingIn] = Field(max_length=10_000)


class RaterRead(ResponseBody):
    user_id: int
    email: str


class RatingRead(ResponseBody):
    doc_id: str
    rating: float
    # Who set the rating last and when (null for ratings older than that record).
    rated_by: RaterRead | None = None
    rated_at: datetime | None = None


class RatingsRead(ResponseBody):
    ratings: list[RatingRead]


class QueryScore(ResponseBody):
    run_id: int
    status: str
    score: float | None
    raw_score: float | None
    reason: str | None


class RatingsChanged(ResponseBody):
    ratings: list[RatingRead]
    query_score: QueryScore | None
    case_score: float | None
