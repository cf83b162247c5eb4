"""Score charts drawn as SVG by the templates: axes, run numbers, and every run marked.

A chart is computed here (pure, tested without a browser) and drawn by
templates/common/score_chart.html. Scores are 0-100. A run without a score keeps its place
and is marked on the baseline; a partial run (a mean over fewer than all queries) is drawn
hollow and amber; a line never joins across a missing run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.vocabulary import is_partial

__all__ = ["ChartDot", "ScoreChart", "range_hue", "score_chart"]

DotKind = Literal["scored", "partial", "missing"]
Y_TICKS = (0, 25, 50, 75, 100)
MAX_X_LABELS = 12


@dataclass(frozen=True)
class ChartDot:
    """One run on the chart: where it is drawn, how, and what its tooltip says."""

    x: float
    y: float
    run_id: int
    score: float | None
    kind: DotKind
    title: str


@dataclass(frozen=True)
class ScoreChart:
    """Everything a template needs to draw a score chart."""

    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    y_ticks: list[tuple[int, float]] = field(default_factory=list)
    x_ticks: list[tuple[str, float]] = field(default_factory=list)
    segments: list[list[tuple[float, float]]] = field(default_factory=list)
    dots: list[ChartDot] = field(default_factory=list)

    @property
    def missing(self) -> int:
        """Return how many runs have no score (marked on the baseline)."""
        return sum(1 for d in self.dots if d.kind == "missing")

    @property
    def partial(self) -> int:
        """Return how many runs' scores are means over fewer than all queries."""
        return sum(1 for d in self.dots if d.kind == "partial")


def _kind(point: Any, score: float | None, status_attr: str | None) -> tuple[DotKind, str]:
    """Return how a point is drawn and why, from its score and counts (or query status)."""
    status = getattr(point, status_attr, "") if status_attr else ""
    if score is None:
        if getattr(point, "failed", False):
            return "missing", "the run failed"
        if status is None:
            return "missing", "not in this run"
        if status:
            return "missing", f"no score ({status})"
        errors = getattr(point, "errors", None)
        return "missing", f"no score ({errors} errors)" if errors else "no score"
    scored, total = getattr(point, "scored", None), getattr(point, "total", None)
    errors, unscored = getattr(point, "errors", 0) or 0, getattr(point, "unscored", 0) or 0
    if is_partial(scored, total, errors, unscored):
        return "partial", f"{round(score)} over {scored} of {total} queries"
    return "scored", str(round(score))


def score_chart(
    points: Sequence[Any],
    *,
    width: int = 640,
    height: int = 180,
    labels: Sequence[str] = (),
    ticks: Sequence[str] = (),
    score_attr: str = "score",
    status_attr: str | None = "status",
) -> ScoreChart:
    """Return the chart of points (each with run_id and a 0-100 score, optionally scored,
    total, errors or a query's status), oldest first; labels name the runs in the tooltips,
    ticks (run numbers by default) under the axis; score_attr and status_attr name the
    attributes of the score and of a query's status (None: the points have no such status)."""
    scores: list[float | None] = [getattr(p, score_attr) for p in points]
    left, right, top, bottom = 34.0, width - 12.0, 10.0, height - 24.0
    inner = bottom - top
    step = (right - left) / max(1, len(points) - 1)

    def x_of(i: int) -> float:
        return round(left + (i * step if len(points) > 1 else (right - left) / 2), 1)

    def y_of(score: float) -> float:
        return round(bottom - max(0.0, min(100.0, score)) * inner / 100, 1)

    dots: list[ChartDot] = []
    segments: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for i, (point, score) in enumerate(zip(points, scores, strict=True)):
        kind, why = _kind(point, score, status_attr)
        name = labels[i] if i < len(labels) else f"Run {point.run_id}"
        y = bottom if score is None else y_of(score)
        dots.append(ChartDot(x_of(i), y, point.run_id, score, kind, f"{name}: {why}"))
        if score is None:
            if current:
                segments.append(current)
            current = []
        else:
            current.append((x_of(i), y))
    if current:
        segments.append(current)
    every = max(1, -(-len(points) // MAX_X_LABELS))  # ceil: at most MAX_X_LABELS labels
    x_ticks = [
        (ticks[i] if i < len(ticks) else str(p.run_id), x_of(i))
        for i, p in enumerate(points)
        if i % every == 0 or i == len(points) - 1
    ]
    if len(x_ticks) > 1 and x_ticks[-1][1] - x_ticks[-2][1] < step * every / 2:
        del x_ticks[-2]  # the last run's label wins over a crowded neighbour
    return ScoreChart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        y_ticks=[(level, y_of(level)) for level in Y_TICKS],
        x_ticks=x_ticks,
        segments=segments,
        dots=dots,
    )


def range_hue(score: float | None, low: float | None, high: float | None) -> int:
    """Return the hsl hue of a score by its place between the lowest and the highest score
    shown (red to green), so that a heatmap whose scores all lie within 77-96 still shows
    which is which; a single value is green."""
    if score is None or low is None or high is None:
        return 0
    if high - low < 1e-9:
        return 120
    return round(max(0.0, min(1.0, (score - low) / (high - low))) * 120)
