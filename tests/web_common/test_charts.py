"""Chart helpers: a missing score keeps its place and leaves a gap, never a 0 or a 500."""

from __future__ import annotations

from app.vocabulary import is_partial
from app.web_common.templating import (
    chart_points,
    chart_segments,
    coverage,
    polyline,
    rated,
    templates,
)


def test_a_missing_score_keeps_its_place_and_is_no_point() -> None:
    # width 102, height 104, pad 2: x steps by 24.5, y = 102 - score.
    points = chart_points([10.0, 20.0, None, 30.0, 40.0], 102, 104)
    assert points == [(2.0, 92.0), (26.5, 82.0), None, (75.5, 72.0), (100.0, 62.0)]
    assert chart_segments(points) == [[(2.0, 92.0), (26.5, 82.0)], [(75.5, 72.0), (100.0, 62.0)]]


def test_gaps_at_the_ends_and_in_a_row_make_no_empty_segment() -> None:
    points = chart_points([None, 50.0, None, None, 100.0, None], 102, 52)
    # x steps by 19.6; y = 2 + 48 - score * 48 / 100.
    assert points == [None, (21.6, 26.0), None, None, (80.4, 2.0), None]
    assert chart_segments(points) == [[(21.6, 26.0)], [(80.4, 2.0)]]


def test_nothing_scored_draws_nothing() -> None:
    assert chart_points([None], 100, 50) == [None]
    assert chart_points([None, None], 100, 50) == [None, None]
    assert chart_segments([None, None]) == []
    assert chart_points([], 100, 50) == [] and chart_segments([]) == []


def test_scores_out_of_range_are_clamped_not_dropped() -> None:
    assert chart_points([-5.0, 0.0, 120.0], 14, 14) == [(2.0, 12.0), (7.0, 12.0), (12.0, 2.0)]
    assert polyline(chart_segments(chart_points([0.0, 100.0], 14, 14))[0]) == "2.0,12.0 12.0,2.0"


def test_the_sparkline_macro_breaks_its_line_at_a_missing_score() -> None:
    macros = templates.env.get_template("macros.html").make_module({"csrf_token": "x"})
    points = [{"score": s} for s in (20.0, 40.0, None, 60.0, 80.0, None, 90.0)]
    # A template module's macros are attributes that mypy cannot see.
    svg = str(macros.sparkline(points, width=64, height=104))  # type: ignore[attr-defined]
    # x steps by 10; y = 102 - score.
    assert svg.count("<polyline") == 2
    assert 'points="2.0,82.0 12.0,62.0"' in svg
    assert 'points="32.0,42.0 42.0,22.0"' in svg
    # The last run's score is a lone point with the end dot, never joined across the gap.
    assert svg.count("<circle") == 1 and 'cx="62.0" cy="12.0" r="2.5"' in svg
    assert "0.0,102.0" not in svg  # a missing score is not drawn as 0


def test_coverage_says_what_a_partial_score_leaves_out() -> None:
    assert coverage(21, 25, errors=4) == "21 of 25 queries: 4 errors"
    assert coverage(22, 25, errors=1, unscored=2) == "22 of 25 queries: 1 error, 2 unscored"
    assert coverage(3, 5) == "3 of 5 queries: 2 not run"
    assert coverage(25, 25) is None
    assert coverage(0, 0) is None and coverage(None, 10) is None


def test_unrated_queries_alone_are_coverage_not_a_partial_score() -> None:
    # 2 of 25 queries have no ratings: every run leaves them out alike.
    assert is_partial(23, 25, errors=0, unscored=2) is False
    assert coverage(23, 25, unscored=2) is None
    assert rated(23, 25, unscored=2) == "23 of 25 queries rated"
    # An error or a query not run is partial; the rating coverage then gives way to why.
    assert is_partial(22, 25, errors=1, unscored=2) is True
    assert rated(22, 25, errors=1, unscored=2) is None
    assert is_partial(20, 25, unscored=2) is True
    assert coverage(20, 25, unscored=2) == "20 of 25 queries: 2 unscored, 3 not run"
    assert rated(25, 25) is None and is_partial(25, 25) is False
