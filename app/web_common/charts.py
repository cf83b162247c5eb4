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


@dataclass(frozen=True)
class _Frame:
    """The plot area of a chart of count runs, and where a run or a score falls in it."""

    left: float
    right: float
    top: float
    bottom: float
    count: int

    @property
    def step(self) -> float:
        """Return the distance between two neighbouring runs."""
        return (self.right - self.left) / max(1, self.count - 1)

    def x_of(self, i: int) -> float:
        """Return the x of the i-th run; a single run sits in the middle."""
        offset = i * self.step if self.count > 1 else (self.right - self.left) / 2
        return round(self.left + offset, 1)

    def y_of(self, score: float) -> float:
        """Return the y of a score, clamped to 0-100."""
        inner = self.bottom - self.top
        return round(self.bottom - max(0.0, min(100.0, score)) * inner / 100, 1)


def _frame(width: int, height: int, count: int) -> _Frame:
    """Return the plot area inside the margins kept for the axes' labels."""
    return _Frame(left=34.0, right=width - 12.0, top=10.0, bottom=height - 24.0, count=count)


def _dot(
    i: int,
    point: Any,
    score: float | None,
    frame: _Frame,
    label: str | None,
    status_attr: str | None,
) -> ChartDot:
    """Return the i-th run's dot; a run without a score sits on the baseline."""
    kind, why = _kind(point, score, status_attr)
    name = _or_default(label, f"Run {point.run_id}")
    y = frame.bottom if score is None else frame.y_of(score)
    return ChartDot(frame.x_of(i), y, point.run_id, score, kind, f"{name}: {why}")


def _dots(
    points: Sequence[Any],
    frame: _Frame,
    labels: Sequence[str],
    score_attr: str,
    status_attr: str | None,
) -> list[ChartDot]:
    """Return every run's dot, in the order of the points."""
    return [
        _dot(i, point, getattr(point, score_attr), frame, _nth(labels, i), status_attr)
        for i, point in enumerate(points)
    ]


def _nth(texts: Sequence[str], i: int) -> str | None:
    """Return the i-th text, or None past the end."""
    return texts[i] if i < len(texts) else None


def _or_default(text: str | None, default: str) -> str:
    """Return text, or the default when there is none (an empty text is kept)."""
    return default if text is None else text


def _segments(dots: Sequence[ChartDot]) -> list[list[tuple[float, float]]]:
    """Return the runs of scored dots as lines, broken at every run without a score."""
    segments: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for dot in dots:
        if dot.score is not None:
            current.append((dot.x, dot.y))
        elif current:
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    return segments


def _x_ticks(points: Sequence[Any], ticks: Sequence[str], frame: _Frame) -> list[tuple[str, float]]:
    """Return at most MAX_X_LABELS run labels under the axis, the last run's always among them."""
    every = max(1, -(-len(points) // MAX_X_LABELS))  # ceil: at most MAX_X_LABELS labels
    last = len(points) - 1
    x_ticks = [
        (_or_default(_nth(ticks, i), str(p.run_id)), frame.x_of(i))
        for i, p in enumerate(points)
        if i % every == 0 or i == last
    ]
    if len(x_ticks) > 1 and x_ticks[-1][1] - x_ticks[-2][1] < frame.step * every / 2:
        del x_ticks[-2]  # the last run's label wins over a crowded neighbour
    return x_ticks


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
    frame = _frame(width, height, len(points))
    dots = _dots(points, frame, labels, score_attr, status_attr)
    return ScoreChart(
        width=width,
        height=height,
        left=frame.left,
        right=frame.right,
        top=frame.top,
        bottom=frame.bottom,
        y_ticks=[(level, frame.y_of(level)) for level in Y_TICKS],
        x_ticks=_x_ticks(points, ticks, frame),
        segments=_segments(dots),
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
