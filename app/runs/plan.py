"""The run pipeline's plain data: what a run fetches, and what came back, scored.

A plan is read from the database once (``runs.load_plan``); fetching and scoring then work
on these objects with no session open, and ``runs.finish_run`` stores the outcome. Scoring
the fetched queries is pure, so it lives here too.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.scoring import Outcome, QueryInput, ScorerConfig, score_queries
from app.scoring.types import StoredDocs
from app.search import EndpointConfig, SearchRequest
from app.vocabulary import QueryStatus

__all__ = ["FetchedQuery", "QueryPlan", "RunPlan", "RunSetupError", "score_fetched"]


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
    outcomes = iter(score_queries(plan.scorer, inputs, owner=plan.owner_id))
    return [
        next(outcomes)
        if f.error is None
        else Outcome(status=QueryStatus.ERROR, score=None, raw_score=None, reason=f.error)
        for f in fetched
    ]
