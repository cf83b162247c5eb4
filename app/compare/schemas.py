"""Comparison of two runs (or a run with the current ratings): the compare page and its twin."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.bodies import ResponseBody
from app.compare.metric_schemas import MetricCompareRead
from app.vocabulary import QueryStatus

# The comparison's one decision (compare.stats.decide).
Verdict = Literal[
    "better", "worse", "no_evidence", "tests_disagree", "too_few", "nothing_to_compare"
]

CompareSort = Literal["delta", "text", "position"]
COMPARE_SORTS: tuple[CompareSort, ...] = ("delta", "text", "position")
Change = Literal["improved", "worsened", "unchanged", "incomparable", "only_base", "only_other"]


class CompareSide(ResponseBody):
    run_id: int
    try_number: int
    current_ratings: bool = Field(
        description="Scored with the current ratings; false: the run's stored scores"
    )
    case_score: float | None = Field(description="Mean of the scored queries")
    scored: int
    unscored: int
    errors: int
    knobs: dict[str, Any] | None = Field(
        default=None, description="Knob values the run searched with (its own, else its try's)"
    )


class DocChange(ResponseBody):
    id: str
    title: str | None
    rank: int = Field(description="Rank in the run the doc is in the top k of")
    rating: float | None = Field(description="Current rating of the doc for this query")


class QueryOverlap(ResponseBody):
    jaccard: float = Field(
        description="size of the intersection over the union of the two top-k id lists"
    )
    rbo: float = Field(description="Extrapolated rank-biased overlap, p = 0.9")


class QueryComparison(ResponseBody):
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
    overlap: QueryOverlap | None = Field(
        default=None, description="Overlap of the two top k; null unless the query is in both"
    )


class CompareCounts(ResponseBody):
    improved: int
    worsened: int
    unchanged: int
    incomparable: int = Field(description="In both runs, but not scored in at least one")
    only_base: int
    only_other: int
    only_in_one: int = Field(description="only_base + only_other")


class CompareStats(ResponseBody):
    n: int = Field(description="Queries scored in both runs")
    mean_base: float | None
    mean_other: float | None
    mean_delta: float | None
    wins: int = Field(description="Queries whose score rose by more than 1e-9")
    losses: int
    ties: int
    t_test_p: float | None = Field(description="Two-sided paired t-test (scipy ttest_rel)")
    randomization_p: float | None = Field(
        description="Two-sided paired randomization test, (1 + hits) / (1 + flips)"
    )
    ci_low: float | None = Field(description="95% t interval of the mean delta")
    ci_high: float | None
    flips: int
    small_sample: bool = Field(description="Too few paired queries to tell (n < 10)")


class ChangedQuery(ResponseBody):
    query_id: int
    text: str
    jaccard: float
    rbo: float


class CaseOverlap(ResponseBody):
    n: int = Field(description="Queries in both runs")
    mean_jaccard: float | None
    mean_rbo: float | None
    changed_most: list[ChangedQuery] = Field(description="Lowest RBO first (at most 10)")


class RunComparison(ResponseBody):
    case_id: int
    scorer_id: int
    scorer_name: str
    aggregate: str = Field(
        default="mean",
        description='"mean" or "weighted_mean": how both sides\' case scores (re-scored with '
        "the case's current settings) average their queries",
    )
    k: int = Field(description="Depth of the top whose entries and exits are listed")
    sort: CompareSort
    base: CompareSide
    other: CompareSide
    case_score_delta: float | None = Field(
        description="other - base case score; the two may average different queries, "
        "so the headline is headline_delta"
    )
    headline_delta: float | None = Field(
        default=None,
        description="The paired mean delta over the queries scored in both (stats.mean_delta): "
        "the one number the page shows between the two case scores",
    )
    headline_change: Change | None = Field(
        default=None, description="How the paired mean moved; null when no query is in both"
    )
    sets_differ: str | None = Field(
        default=None,
        description="Why the two case scores' difference is not the headline, when the "
        "queries scored on each side are not the same; null when they are",
    )
    case_change: Change | None = Field(
        description="How the case score moved; null unless both sides have a case score"
    )
    counts: CompareCounts
    stats: CompareStats
    overlap: CaseOverlap
    summary: str = Field(description="The comparison in one sentence")
    verdict: Verdict = Field(
        default="nothing_to_compare",
        description="The one decision: better or worse only when decision_p < 0.05 and the "
        "95% interval of the mean change excludes 0; tests_disagree when only one of them "
        "holds; too_few below 10 paired queries; else no_evidence",
    )
    decision_p: float | None = Field(
        default=None,
        description="The p-value the verdict used: the primary metric's randomization p, "
        "Holm-corrected (p_holm) when the case has several metrics",
    )
    queries: list[QueryComparison]
    metrics: list[MetricCompareRead] = Field(
        default_factory=list,
        description="Every metric of the case (the primary first), with p-values and "
        "Holm's correction over the metrics",
    )


DocMark = Literal["same", "moved", "new", "dropped"]


class SideDoc(ResponseBody):
    id: str
    title: str | None
    rank: int
    rating: float | None = Field(description="Current rating of the doc for this query")
    mark: DocMark = Field(
        description="same rank; moved; new (not in base's top k); dropped (not in other's)"
    )
    other_rank: int | None = Field(description="Its rank in the other list's top k, if there")


class QuerySideBySide(ResponseBody):
    case_id: int
    query_id: int
    text: str
    k: int
    base_run_id: int
    other_run_id: int
    base_try_number: int = Field(description="The try the base run searched with")
    other_try_number: int = Field(description="The try the other run searched with")
    base_knobs: dict[str, Any] | None = Field(
        default=None, description="The knob values the base run searched with, if any"
    )
    other_knobs: dict[str, Any] | None = Field(
        default=None, description="The knob values the other run searched with, if any"
    )
    base_docs: list[SideDoc]
    other_docs: list[SideDoc]
    overlap: QueryOverlap
