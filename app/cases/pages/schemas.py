"""Page models: the data behind each HTML page, also served as its JSON twin."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.bodies import ResponseBody
from app.books.schemas import RatingsSource
from app.cases.history_schemas import QueryScorePoint
from app.cases.pages.metric_panel import MetricPanel
from app.cases.pages.score_panel import CaseScore
from app.cases.schemas import AnnotationRead, CaseRead, TryRead
from app.endpoints.schemas import EndpointOption
from app.runs.schemas import RunSummary
from app.scorers.schemas import ScaleEntry, ScorerOption, ScorerRead
from app.vocabulary import Engine, QueryStatus

QuerySort = Literal["position", "score", "score_desc", "text"]
QUERY_SORTS: tuple[QuerySort, ...] = ("position", "score", "score_desc", "text")
PER_PAGE = 100


class ScorePoint(ResponseBody):
    run_id: int
    score: float | None = Field(description="Null when the finished run scored no query")
    scored: int | None = Field(default=None, description="Queries the score is the mean of")
    total: int | None = Field(default=None, description="Queries in the run")
    errors: int | None = Field(default=None, description="Queries that errored")
    failed: bool = Field(default=False, description="The run failed as a whole")
    aggregate: str | None = Field(
        default=None,
        description='The mean the score was recorded with, "mean" or "weighted_mean" (the '
        "run's recorded_aggregate; null: not recorded)",
    )


class CaseRow(ResponseBody):
    id: int
    name: str
    last_score: float | None
    last_run_at: datetime | None
    query_count: int
    last_scored: int = Field(default=0, description="Queries the last score is the mean of")
    last_unscored: int = 0
    last_errors: int = 0
    last_total: int = Field(
        default=0, description="Queries in that run; last_scored < last_total: a partial score"
    )
    aggregate: str = Field(
        default="mean", description='How the case averages its queries: "mean" or "weighted_mean"'
    )
    history: list[ScorePoint] = Field(
        description="Case scores of the last finished runs, oldest first"
    )
    mine: bool = True
    team_ids: list[int] = Field(default_factory=list)
    next_run_at: datetime | None = Field(default=None, description="Next scheduled run (UTC)")


class TeamOption(ResponseBody):
    id: int
    name: str


class CasesPage(ResponseBody):
    cases: list[CaseRow]
    endpoints: list[EndpointOption]
    scorers: list[ScorerOption]
    default_templates: dict[Engine, str]
    default_scorer_id: int | None
    teams: list[TeamOption] = Field(default_factory=list)
    show: str = Field(default="all", description='"all", "mine" or "team-<id>"')


class QueryRow(ResponseBody):
    id: int
    text: str
    position: int
    status: QueryStatus | None = Field(
        description="Status in the latest finished run; null when not run"
    )
    score: float | None
    num_found: int | None
    unrated_top_k: int | None
    error: str | None
    notes: str | None = None
    information_need: str | None = None
    history: list[QueryScorePoint] = Field(
        default_factory=list, description="Stored scores in the last finished runs, oldest first"
    )
    tags: list[str] = Field(default_factory=list)
    weight: float = 1.0
    metric_scores: dict[str, float | None] = Field(
        default_factory=dict, description="Every metric's score in the latest run, by scorer id"
    )


class QueryList(ResponseBody):
    items: list[QueryRow]
    sort: QuerySort
    q: str
    tag: str = Field(default="", description="Only the queries with this tag (empty: all)")
    metric: int | None = Field(
        default=None, description="The metric (scorer id) the score sorts use; null: the primary"
    )
    metric_names: dict[str, str] = Field(
        default_factory=dict, description="The latest run's metrics by scorer id, primary first"
    )
    page: int
    per_page: int
    total: int
    pages: int


class CaseHistory(ResponseBody):
    case_id: int
    metric: int | None = Field(
        default=None, description="The metric (scorer id) the points score; null: the primary"
    )
    metric_names: dict[int, str] = Field(
        default_factory=dict, description="The case's metrics by scorer id, the primary first"
    )
    points: list[ScorePoint] = Field(description="Finished runs' case scores, oldest first")
    runs: list[RunSummary] = Field(description="The latest runs, newest first")
    scorer_names: dict[int, str] = Field(description="Names of the runs' scorers by id")
    knobs: dict[int, dict[str, Any]] = Field(
        default_factory=dict,
        description="Knob values each run searched with (its own, a sweep's, else its try's)",
    )
    annotations: list[AnnotationRead] = Field(
        default_factory=list, description="Notes on the case's timeline (app/schedules)"
    )


class ScaleMismatch(ResponseBody):
    """Many of the case's ratings lie outside its scorer's scale (a 0-3 rated case under a
    0-1 scorer): the case score is then not what the numbers seem to say."""

    off_scale: int = Field(description="Ratings of the case not on the scorer's scale")
    rated: int = Field(description="All ratings of the case")
    ratings_low: float = Field(description="The lowest rating of the case")
    ratings_high: float = Field(description="The highest rating of the case")
    scale_low: float
    scale_high: float


class CasePage(ResponseBody):
    case: CaseRead
    current_try: TryRead
    scorer: ScorerRead
    scale: list[ScaleEntry]
    zero_gives_ten: bool = Field(description="The 0 key gives the rating 10 (a 1-10 scale)")
    k: int
    score: CaseScore
    active_run: RunSummary | None
    queries: QueryList
    history: CaseHistory
    endpoints: list[EndpointOption]
    scorers: list[ScorerOption]
    ratings_source: RatingsSource | None = None
    scale_mismatch: ScaleMismatch | None = Field(
        default=None, description="Set when many ratings lie outside the scorer's scale"
    )
    metrics: MetricPanel | None = Field(
        default=None, description="Every metric of the latest run, and its tags-by-metrics table"
    )
