"""Click log bodies: the log itself, what an ingest stored and refused, the log's summary."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from app.bodies import Name, RequestBody, ResponseBody, TeamIds
from app.judges.schemas import RaterRef

PositionBase = Literal[0, 1]
MAX_REFUSED = 100  # refusals listed in one answer; the count is always whole


class ClickLogCreate(RequestBody):
    name: Name
    position_base: PositionBase = 1
    team_ids: TeamIds = Field(default_factory=list)


class ClickLogUpdate(RequestBody):
    name: Name | None = None
    position_base: PositionBase | None = None
    team_ids: TeamIds | None = None


class ClickLogRead(ResponseBody):
    id: int
    name: str
    owner_id: int
    position_base: int
    created_at: datetime
    team_ids: list[int] = Field(default_factory=list)


class Refusal(ResponseBody):
    line: int
    message: str


class IngestResult(ResponseBody):
    """`stored` new records; `duplicates` already stored; `refused` the first 100 bad ones."""

    stored: int = 0
    duplicates: int = 0
    refused_count: int = 0
    refused: list[Refusal] = Field(default_factory=list)


class RankCtr(ResponseBody):
    rank: int
    impressions: int
    clicks: int
    ctr: float | None


class ClickLogSummary(ResponseBody):
    queries: int
    events: int
    by_action: dict[str, int]
    distinct_queries: int
    first_at: datetime | None
    last_at: datetime | None
    impressions: Literal["events", "hit_ids", "none"]
    # From impression and click events at ranks 1..20 (1-based, whatever the sender's base).
    ctr_by_rank: list[RankCtr] = Field(default_factory=list)


ClickModel = Literal["coec", "pbm", "sdbn", "dbn"]
DEFAULT_ACTIONS = {"click": 1.0}


class Window(RequestBody):
    """Which part of the log: a date range and one application."""

    since: datetime | None = None
    until: datetime | None = None
    application: Annotated[str, StringConstraints(max_length=100)] | None = None


class JudgementsBody(Window):
    book_id: int
    model: ClickModel
    max_rank: Annotated[int, Field(ge=1, le=100)] = 20
    min_impressions: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    actions: Annotated[dict[str, Annotated[float, Field(gt=0, le=1000)]], Field(min_length=1)] = (
        Field(default_factory=lambda: dict(DEFAULT_ACTIONS))
    )
    mapping: Literal["quantiles", "thresholds"] = "quantiles"
    thresholds: list[float] | None = None


class JudgementsResult(ResponseBody):
    """What a click model wrote into the book (it runs at once: `status` is "finished")."""

    status: Literal["finished"] = "finished"
    rater: RaterRef
    model: ClickModel
    impressions: Literal["events", "hit_ids", "none"]
    pairs_seen: int
    pairs_judged: int
    pairs_below_minimum: int
    pairs_created: int
    ratings: dict[str, int]


class ClickJudgementRead(ResponseBody):
    """A clicks rater's judgement of a pair, with the numbers it came from."""

    rater_id: int
    rating: float
    model: str
    impressions: int
    clicks: int
    expected_clicks: float
    estimate: float
    ci_low: float
    ci_high: float | None


class SampleBody(Window):
    design: Literal["top", "uniform", "pps", "stratified"]
    size: Annotated[int, Field(ge=1, le=10_000)]
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = None
    strata: (
        dict[Literal["head", "torso", "tail"], Annotated[int, Field(ge=0, le=10_000)]] | None
    ) = None


class SampledQuery(ResponseBody):
    text: str
    frequency: int
    inclusion_probability: float
    weight: float
    stratum: str | None = None


class SampleRead(ResponseBody):
    """A sample of the log's distinct query texts; `seed` draws the same sample again."""

    design: str
    seed: int
    population: int
    searches: int
    queries: list[SampledQuery]


class FromLogBody(SampleBody):
    click_log_id: int
    # A query the case has already keeps its weight (and inclusion probability) unless this
    # is true; a query the sample adds always gets its design weight.
    replace_weights: bool = False


class FromLogRead(ResponseBody):
    """The sample drawn, the ids of the case's queries it became, and texts left out.

    `weights_replaced`: queries the case had whose weight the sample changed (only with
    `replace_weights`); `weights_kept`: queries the case had whose weight differs from their
    design weight and was kept.
    """

    sample: SampleRead
    query_ids: list[int]
    skipped: int
    weights_replaced: list[int] = Field(default_factory=list)
    weights_kept: list[int] = Field(default_factory=list)


# An engine index name: what OpenSearch and Elasticsearch allow, without wildcards or paths.
IndexName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.\-+]{0,199}$")]


class PullBody(RequestBody):
    """Read an engine's UBI indexes through one of the caller's search endpoints."""

    search_endpoint_id: int
    queries_index: IndexName = "ubi_queries"
    events_index: IndexName = "ubi_events"
    # Without `since`, a pull starts where the last pull of this endpoint and index stopped.
    since: datetime | None = None
    until: datetime | None = None
    page_size: Annotated[int, Field(ge=10, le=10_000)] = 1000


class PulledIndex(ResponseBody):
    """What a pull read from one index: fetched from the engine, stored new, already stored."""

    index: str
    missing: bool = False
    fetched: int = 0
    pages: int = 0
    stored: int = 0
    duplicates: int = 0
    refused_count: int = 0
    refused: list[Refusal] = Field(default_factory=list)
    # The latest timestamp pulled from this index so far: the next pull starts there.
    cursor: datetime | None = None


PullStatus = Literal["queued", "running", "finished", "failed"]


class PullResult(ResponseBody):
    """A pull: answered at once "queued", then a job reads page by page ("running", its
    counts growing) until it ends "finished", or "failed" with `error` (what it stored stays).

    Poll `poll_url` (the log's `GET …/pull`) until `status` is "finished" or "failed".
    """

    id: str
    status: PullStatus = "queued"
    search_endpoint_id: int
    at: datetime
    # When the pull last made progress (a page stored); a running pull silent for
    # PULL_STALE_S seconds counts as abandoned and another may start.
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    queries: PulledIndex
    events: PulledIndex
    error: str | None = None
    poll_url: str | None = None
    request: PullBody


class SlicesQuery(Window):
    """Which queries count as a slice: enough searches, and a click-through at most this."""

    min_searches: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    max_ctr: Annotated[float, Field(ge=0, le=1)] = 0.1
    limit: Annotated[int, Field(ge=1, le=1000)] = 50


class SliceQuery(ResponseBody):
    """A query text's searches: how many showed nothing, and how many of the rest drew a click."""

    text: str
    searches: int
    zero_result_searches: int
    clicked_searches: int
    # Clicked searches / searches that showed results; None when none showed any.
    ctr: float | None


class ClickSlices(ResponseBody):
    """Queries worth a look: those that found nothing, and those whose results draw no clicks.

    Both lists are ordered by searches, most first, and hold at most `limit` texts each;
    `*_total` count every text of the slice.
    """

    zero_results: list[SliceQuery]
    zero_results_total: int
    low_ctr: list[SliceQuery]
    low_ctr_total: int
    min_searches: int
    max_ctr: float


class EstimateQuery(Window):
    """How many pairs a judgement with these settings would judge."""

    max_rank: Annotated[int, Field(ge=1, le=100)] = 20
    min_impressions: Annotated[int, Field(ge=1, le=1_000_000)] = 10


class JudgementsEstimate(ResponseBody):
    """Pairs (query text, doc) shown at ranks 1..max_rank, and those shown often enough."""

    impressions: Literal["events", "hit_ids", "none"]
    min_impressions: int
    max_rank: int
    pairs_seen: int
    pairs_qualifying: int
