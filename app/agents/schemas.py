"""What the agents' tools answer, where the answer has a shape of its own."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.agents.heldout import HalfReport
from app.bodies import ResponseBody
from app.compare.metric_schemas import MetricCompareRead
from app.compare.schemas import CompareCounts, Verdict

__all__ = ["DraftRead", "ProposalAll", "ProposalRead"]


class DraftRead(ResponseBody):
    query_template: str | None
    knobs: dict[str, Any]


class ProposalAll(ResponseBody):
    """The draft against the current try over all the queries (the compare contract)."""

    verdict: Verdict
    summary: str
    headline_delta: float | None = Field(description="The paired mean change of the primary")
    decision_p: float | None
    base_score: float | None = Field(description="The current try's case score")
    other_score: float | None = Field(description="The draft's case score")
    counts: CompareCounts
    metrics: list[MetricCompareRead] = Field(description="Every metric, Holm-corrected p")


class ProposalRead(ResponseBody):
    """A proposed try: the draft's run compared with the current try's, on all queries, on
    the held-out half and on the tuning half."""

    status: Literal["finished", "running"] = Field(
        description="running: the runs did not end within wait_s; compare them later"
    )
    case_id: int
    run_id: int = Field(description="The draft's run (what apply_try applies)")
    base_run_id: int = Field(description="The current try's run it is compared with")
    message: str | None = None
    try_number: int | None = None
    draft: DraftRead | None = None
    all: ProposalAll | None = None
    held_out: HalfReport | None = Field(
        default=None,
        description="The fixed held-out half of the queries (chosen by the case, the same "
        "every time): judge a change by this half",
    )
    tuning: HalfReport | None = Field(default=None, description="The other half")
    holds_on_held_out: str | None = Field(
        default=None, description="Whether a gain on the tuning half holds on the held-out half"
    )
    complete: bool | None = Field(
        default=None, description="The draft's run scored every query without error"
    )
