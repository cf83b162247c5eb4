"""The score chart's geometry (app/web_common/charts.py): axes, run numbers, marked runs."""

from __future__ import annotations

from dataclasses import dataclass

from app.web_common.charts import ChartDot, ScoreChart, range_hue, score_chart


@dataclass
class P:
    run_id: int
    score: float | None
    scored: int | None = None
    total: int | None = None
    errors: int | None = None
    failed: bool = False


def test_axes_have_a_score_scale_and_the_run_numbers() -> None:
    chart = score_chart([P(7, 50.0), P(8, 100.0), P(9, 0.0)], width=640, height=180)
    # The plot runs from x 34 to 628 and from y 10 (100) to 156 (0).
    assert chart.y_ticks == [(0, 156.0), (25, 119.5), (50, 83.0), (75, 46.5), (100, 10.0)]
    assert chart.x_ticks == [("7", 34.0), ("8", 331.0), ("9", 628.0)]
    assert [(d.x, d.y, d.kind) for d in chart.dots] == [
        (34.0, 83.0, "scored"),
        (331.0, 10.0, "scored"),
        (628.0, 156.0, "scored"),
    ]
    assert chart.segments == [[(34.0, 83.0), (331.0, 10.0), (628.0, 156.0)]]


def test_partial_failed_and_errored_runs_are_marked_not_dropped() -> None:
    points = [
        P(1, 80.0, scored=25, total=25),
        P(2, 86.0, scored=21, total=25, errors=4),
        P(3, None, scored=0, total=25, errors=25),
        P(4, None, failed=True),
        P(5, 70.0, scored=25, total=25),
    ]
    chart = score_chart(points, labels=["Run 1 · try 1", "Run 2 · try 1 · fuzziness=2"])
    assert [d.kind for d in chart.dots] == ["scored", "partial", "missing", "missing", "scored"]
    assert [d.title for d in chart.dots] == [
        "Run 1 · try 1: 80",
        "Run 2 · try 1 · fuzziness=2: 86 over 21 of 25 queries",
        "Run 3: no score (25 errors)",
        "Run 4: the run failed",
        "Run 5: 70",
    ]
    # A run without a score sits on the baseline and breaks the line.
    assert chart.dots[2].y == chart.dots[3].y == chart.bottom
    assert len(chart.segments) == 2 and len(chart.segments[0]) == 2
    assert (chart.partial, chart.missing) == (1, 2)


def test_query_points_say_why_they_have_no_score() -> None:
    @dataclass
    class Q:
        run_id: int
        score: float | None
        status: str | None

    chart = score_chart([Q(1, None, "error"), Q(2, None, None), Q(3, 40.0, "scored")])
    assert [d.title for d in chart.dots] == [
        "Run 1: no score (error)",
        "Run 2: not in this run",
        "Run 3: 40",
    ]


def test_many_runs_label_at_most_twelve_and_always_the_last() -> None:
    chart = score_chart([P(i, 50.0) for i in range(1, 51)])
    labels = [text for text, _x in chart.x_ticks]
    assert len(labels) <= 12 and labels[0] == "1" and labels[-1] == "50"
    one = score_chart([P(4, 50.0)])
    assert one.x_ticks == [("4", 331.0)] and one.segments == [[(331.0, 83.0)]]


def test_the_heatmap_hue_spans_the_range_shown() -> None:
    assert [range_hue(s, 77.0, 96.0) for s in (77.0, 86.5, 96.0)] == [0, 60, 120]
    assert range_hue(90.0, 90.0, 90.0) == 120
    assert range_hue(None, 0.0, 1.0) == 0


def test_a_small_chart_is_pinned_whole() -> None:
    points = [
        P(3, 40.0, scored=10, total=10),
        P(4, 120.0, scored=8, total=10, errors=2),
        P(5, None, failed=True),
        P(6, -5.0),
        P(7, 55.55),
    ]
    chart = score_chart(points, width=200, height=100, labels=["A", "B"], ticks=["r3"])
    # The plot runs from x 34 to 188 (a step of 38.5) and from y 10 (100) to 76 (0).
    assert chart == ScoreChart(
        width=200,
        height=100,
        left=34.0,
        right=188.0,
        top=10.0,
        bottom=76.0,
        y_ticks=[(0, 76.0), (25, 59.5), (50, 43.0), (75, 26.5), (100, 10.0)],
        x_ticks=[("r3", 34.0), ("4", 72.5), ("5", 111.0), ("6", 149.5), ("7", 188.0)],
        segments=[[(34.0, 49.6), (72.5, 10.0)], [(149.5, 76.0), (188.0, 39.3)]],
        dots=[
            ChartDot(34.0, 49.6, 3, 40.0, "scored", "A: 40"),
            ChartDot(72.5, 10.0, 4, 120.0, "partial", "B: 120 over 8 of 10 queries"),
            ChartDot(111.0, 76.0, 5, None, "missing", "Run 5: the run failed"),
            ChartDot(149.5, 76.0, 6, -5.0, "scored", "Run 6: -5"),
            ChartDot(188.0, 39.3, 7, 55.55, "scored", "Run 7: 56"),
        ],
    )


def test_a_crowded_neighbour_gives_way_to_the_last_run_label() -> None:
    chart = score_chart([P(i, 10.0 * i) for i in range(1, 15)], width=300, height=80)
    # Every second run is labelled; run 13 would sit next to run 14, so it is dropped.
    assert chart.x_ticks == [
        ("1", 34.0),
        ("3", 73.1),
        ("5", 112.2),
        ("7", 151.2),
        ("9", 190.3),
        ("11", 229.4),
        ("14", 288.0),
    ]
