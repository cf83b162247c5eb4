"""Book, pair, judgement, agreement and sync bodies."""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator

from app.bodies import Name, QueryText, RequestBody, ResponseBody, TeamIds
from app.books.consensus import ConsensusMethod
from app.clicks.schemas import ClickJudgementRead
from app.judges.schemas import JudgeCalibration, JudgeJudgementRead, RaterRef

Scale = Annotated[list[float], Field(min_length=2, max_length=11)]
DocId = Annotated[str, StringConstraints(min_length=1, max_length=500)]
SyncMethod = ConsensusMethod
MAX_PAIRS_PER_POST = 10_000


def check_scale(values: list[float]) -> list[float]:
    """Return a scale that is strictly ascending, else raise ValueError."""
    if any(b <= a for a, b in pairwise(values)):
        raise ValueError("the scale must be strictly ascending")
    return values


class BookCreate(RequestBody):
    name: Name
    scale: Scale
    scale_labels: dict[str, str] | None = None
    team_ids: TeamIds = Field(default_factory=list)

    _scale = field_validator("scale")(check_scale)


class BookUpdate(RequestBody):
    name: Name | None = None
    scale: Scale | None = None
    scale_labels: dict[str, str] | None = None
    team_ids: TeamIds | None = None

    @field_validator("scale")
    @classmethod
    def _ascending(cls, values: list[float] | None) -> list[float] | None:
        return None if values is None else check_scale(values)


class BookRead(ResponseBody):
    id: int
    name: str
    owner_id: int
    scale: list[float]
    scale_labels: dict[str, str] | None
    created_at: datetime
    pair_count: int = 0
    team_ids: list[int] = Field(default_factory=list)


class PairIn(RequestBody):
    query_text: QueryText
    doc_id: DocId
    fields: dict[str, Any] = Field(default_factory=dict)
    information_need: str | None = Field(default=None, max_length=20_000)
    position: int | None = Field(default=None, ge=0, le=2**31 - 1)


class PairsPost(RequestBody):
    pairs: list[PairIn] = Field(max_length=MAX_PAIRS_PER_POST)


class PairsAdded(ResponseBody):
    created: int
    existing: int


class JudgementRead(ResponseBody):
    user_id: int
    rating: float | None
    unrateable: bool


class PairToJudge(ResponseBody):
    """A pair as a rater sees it: without the other raters' judgements."""

    id: int
    query_text: str
    doc_id: str
    position: int | None
    fields: dict[str, Any]
    information_need: str | None


class PairRead(PairToJudge):
    # People's judgements (user_id) first, then the judges' (judge_id, with provenance).
    judgements: list[JudgementRead | JudgeJudgementRead | ClickJudgementRead] = Field(
        default_factory=list
    )


class Populate(RequestBody):
    case_id: int
    depth: int = Field(default=10, ge=1, le=500)


class JudgementPut(RequestBody):
    rating: float | None = None
    unrateable: bool = False


class MyJudgement(ResponseBody):
    pair_id: int
    user_id: int
    rating: float | None
    unrateable: bool
    updated_at: datetime


class KappaRead(ResponseBody):
    a: int
    b: int
    n: int
    kappa: float | None


class AgreementRead(ResponseBody):
    raters: int
    pairs: int
    pairs_multi: int
    krippendorff_alpha: float | None
    cohen_kappa: list[KappaRead]
    # People and judges alike; `raters` above counts the people.
    rater_list: list[RaterRef] = Field(default_factory=list)
    judges: list[JudgeCalibration] = Field(default_factory=list)
    # Click models over click logs, calibrated like judges (`judge_id` is the clicks rater's).
    clicks: list[JudgeCalibration] = Field(default_factory=list)


class SyncBody(RequestBody):
    method: SyncMethod
    user_id: int | None = None
    # Judges' ratings: left out (default), counted beside people's, or alone.
    judges: Literal["include", "exclude", "only"] = "exclude"
    judge_id: int | None = None
    # A clicks rater of the book (a click model over a click log), synced like a judge.
    clicks_rater_id: int | None = None


class SyncResult(ResponseBody):
    ratings_set: int
    ratings_unchanged: int
    pairs_without_query: int


RaterKind = Literal["user", "judge", "clicks"]


class RatingsSource(ResponseBody):
    """Where a case's ratings come from: a book and the method of its last sync."""

    book_id: int
    book_name: str
    method: SyncMethod
    rater_email: str | None
    rater_kind: RaterKind | None = Field(
        default=None,
        description='With the "rater" method: a person, a judge or a click model (clicks rater)',
    )
    rater_name: str | None = Field(
        default=None, description="The judge's or click model's name, when one was synced"
    )
