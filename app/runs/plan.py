"""The run pipeline's plain data: what a run fetches, and what came back, scored.

A plan is read from the database once (``store.load_plan``); fetching and scoring then work
on these objects with no session open, and ``store.finish_run`` stores the outcome. Scoring
the fetched queries is pure, so it lives here too.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.scoring import Outcome, QueryInput, ScorerConfig
from app.scoring.score import score_pass
from app.scoring.types import StoredDocs
from app.search import EndpointConfig, SearchRequest, SearchResult
from app.vocabulary import QueryStatus

__all__ = [
    "FetchedQuery",
    "MetricScores",
    "QueryPlan",
    "RunPlan",
    "RunSetupError",
    "score_fetched",
    "score_fetched_metrics",
    "score_metrics",
    "score_with_metrics",
]

# One query's score under each metric of the run: {str(scorer_id): score or None}.
MetricScores = dict[str, float | None]


class RunSetupError(Exception):
    """The run cannot start at all (as opposed to a query failing)."""


@dataclass(frozen=True)
class QueryPlan:
    query_id: int
    text: str
    position: int
    options: Mapping[str, Any]


@dataclass(frozen=True)
class RunPlan:
    """Everything a run needs, as plain data, so fetching happens with no session open."""

    run_id: int
    endpoint: EndpointConfig
    template: str
    field_spec: str
    rows: int
    knobs: Mapping[str, float]
    case_options: Mapping[str, Any]
    scorer: ScorerConfig
    queries: Sequence[QueryPlan] = field(default_factory=list)
    explain: bool = False
    # This execution's own mark on the run row: an execution that lost the run (cancelled,
    # declared interrupted, or its id reused after a delete) can no longer write to it.
    lease: str = field(default_factory=lambda: uuid.uuid4().hex)
    # Whose share of the JavaScript workers the run's scoring uses: the case's owner.
    owner_id: int | None = None
    # The primary scorer's id and the extra metrics (scorer id, config), scored in the
    # same pass over the fetched results.
    scorer_id: int = 0
    metrics: Sequence[tuple[int, ScorerConfig]] = ()
    # A static endpoint's results, read from its result file with the plan: no fetching.
    static_results: Mapping[int, SearchResult] | None = None

    def request_for(self, query: QueryPlan) -> SearchRequest:
        """Return the search request of one query."""
        return SearchRequest(
            template=self.template,
            query_text=query.text,
            query_options=query.options,
            case_options=self.case_options,
            knobs=self.knobs,
            field_spec=self.field_spec,
            rows=self.rows,
            explain=self.explain,
        )


@dataclass
class FetchedQuery:
    plan: QueryPlan
    docs: list[dict[str, Any]] | None
    num_found: int | None
    error: str | None
    duration_ms: float


def score_fetched(
    *, plan: RunPlan, fetched: Sequence[FetchedQuery], ratings: Mapping[int, Mapping[str, float]]
) -> list[Outcome]:
    """Score every fetched query with the run's scorer; fetch errors score nothing."""
    return score_fetched_metrics(plan=plan, fetched=fetched, ratings=ratings)[0]


def score_fetched_metrics(
    *, plan: RunPlan, fetched: Sequence[FetchedQuery], ratings: Mapping[int, Mapping[str, float]]
) -> tuple[list[Outcome], list[MetricScores]]:
    """Score every fetched query with the run's scorer and each of its metrics.

    The scoring inputs are built once and shared by every metric; fetch errors score
    nothing. Returns the primary outcomes and, per query, every metric's score.
    """
    inputs = [
        QueryInput(
            docs=StoredDocs(f.docs or []).as_sequence(),
            ratings=ratings.get(f.plan.query_id, {}),
            num_found=f.num_found,
            query_options=f.plan.options,
            case_options=plan.case_options,
            text=f.plan.text,
        )
        for f in fetched
        if f.error is None
    ]
    primary, extra = score_with_metrics(plan.scorer, plan.metrics, inputs, owner=plan.owner_id)
    outcomes, scores, answered = [], [], iter(range(len(inputs)))
    for f in fetched:
        if f.error is not None:
            outcomes.append(
                Outcome(status=QueryStatus.ERROR, score=None, raw_score=None, reason=f.error)
            )
            scores.append(dict.fromkeys([str(plan.scorer_id), *(str(m) for m, _ in plan.metrics)]))
            continue
        index = next(answered)
        outcomes.append(primary[index])
        outcome = primary[index]
        score = outcome.score if outcome.status == QueryStatus.SCORED else None
        scores.append({str(plan.scorer_id): score, **extra[index]})
    return outcomes, scores


def score_with_metrics(
    scorer: ScorerConfig,
    metrics: Sequence[tuple[int, ScorerConfig]],
    inputs: Sequence[QueryInput],
    *,
    owner: int | None = None,
) -> tuple[list[Outcome], list[MetricScores]]:
    """Return the primary scorer's outcomes and, per input, each metric's score, from one
    pass over the inputs (every built-in shares the arrays made of them)."""
    [primary], values = score_pass([scorer], [config for _, config in metrics], inputs, owner=owner)
    return primary, _metric_scores(metrics, values, len(inputs))


def score_metrics(
    metrics: Sequence[tuple[int, ScorerConfig]],
    inputs: Sequence[QueryInput],
    *,
    owner: int | None = None,
) -> list[MetricScores]:
    """Return, per input, the score of each metric (None when it did not score)."""
    values = score_pass([], [config for _, config in metrics], inputs, owner=owner)[1]
    return _metric_scores(metrics, values, len(inputs))


def _metric_scores(
    metrics: Sequence[tuple[int, ScorerConfig]],
    values: Sequence[list[float | None]],
    size: int,
) -> list[MetricScores]:
    result: list[MetricScores] = [{} for _ in range(size)]
    for (scorer_id, _config), column in zip(metrics, values, strict=True):
        key = str(scorer_id)
        for scores, value in zip(result, column, strict=True):
            scores[key] = value
    return result
