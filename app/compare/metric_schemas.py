"""Every metric of a comparison (API.md, "Metrics, tags and weights")."""

from __future__ import annotations

from pydantic import Field

from app.bodies import ResponseBody


class TagDeltaRead(ResponseBody):
    tag: str
    count: int = Field(description="Queries with the tag scored by the metric in both runs")
    delta: float | None


class MetricCompareRead(ResponseBody):
    scorer_id: int
    name: str
    n: int = Field(description="Queries scored by the metric in both runs")
    base: float | None
    other: float | None
    delta: float | None = Field(description="other - base, over the queries scored in both")
    p_t: float | None = Field(description="Two-sided paired t-test")
    p_randomization: float | None = Field(description="Two-sided paired randomization test")
    p_holm: float | None = Field(
        description="p_randomization with Holm's correction over the comparison's metrics"
    )
    by_tag: list[TagDeltaRead] = Field(default_factory=list)
