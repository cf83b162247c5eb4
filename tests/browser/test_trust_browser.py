"""Numbers to trust at a glance (#25) in a real Chromium: the compare page's one headline,
and history charts with axes, round dots and marked partial and failed runs."""

from __future__ import annotations

from typing import Any

import pytest

from app.db import session_scope
from app.models import Case, Rating, Run
from tests.browser.live import LiveApp
from tests.browser.live import login as _login
from tests.support.pages import doc, finished_run

pytestmark = pytest.mark.browser


def _runs(app: LiveApp) -> tuple[int, int, int]:
    """Store a complete run, a partial one (the matrix errored) and a failed one; rate docs."""
    wars, bat, matrix = (app.query_ids[q] for q in ("star wars", "batman", "the matrix"))
    with session_scope(app.session_factory) as session:
        case = session.get(Case, app.case_id)
        assert case is not None
        scorer, scale = case.scorer_id, sorted(float(v) for v in case.scorer.scale)
        graded = ((wars, "w1", -1), (wars, "w2", 0), (bat, "b1", -1), (matrix, "m1", -1))
        for query_id, doc_id, grade in graded:
            session.add(Rating(query_id=query_id, doc_id=doc_id, rating=scale[grade]))
        session.commit()
    base = finished_run(
        app.session_factory,
        app.case_id,
        {
            wars: {"docs": [doc("w2", "Empire", 1), doc("w1", "A New Hope", 2)]},
            bat: {"docs": [doc("b2", "Batman Forever", 1), doc("b1", "Batman Begins", 2)]},
            matrix: {"docs": [doc("m1", "The Matrix", 1)]},
        },
        scorer=scorer,
        case_score=40.0,
    )
    other = finished_run(
        app.session_factory,
        app.case_id,
        {
            wars: {"docs": [doc("w1", "A New Hope", 1), doc("w2", "Empire", 2)]},
            bat: {"docs": [doc("b1", "Batman Begins", 1)]},
            matrix: {"status": "error", "error": "HTTP 500", "num_found": None},
        },
        scorer=scorer,
        case_score=90.0,
    )
    with session_scope(app.session_factory) as session:
        failed = Run(case_id=app.case_id, try_number=1, scorer_id=scorer, status="failed")
        session.add(failed)
        session.commit()
        return base, other, failed.id


def test_compare_headline_and_history_charts(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    base, other, failed = _runs(live_app)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)

    # One headline: the number between the case scores is the sentence's first number.
    page.goto(f"{live_app.url}/cases/{live_app.case_id}/compare?base={base}&other={other}")
    headline = page.locator("#headline-delta").inner_text()
    summary = page.locator("#stats-summary").inner_text()
    assert summary.startswith(f"{headline} points"), (headline, summary)
    assert float(headline) > 0
    expect(page.locator("#compare-headline")).to_contain_text("over the 2 queries scored in both")
    expect(page.locator("#sets-differ")).to_be_visible()
    expect(page.locator("#sets-differ")).to_contain_text("1 query not scored in both")
    base_box = page.locator("#compare-base").bounding_box()
    head_box = page.locator("#compare-headline").bounding_box()
    other_box = page.locator("#compare-other").bounding_box()
    assert base_box["x"] < head_box["x"] < other_box["x"]  # between the two case scores

    # The case history chart: a score axis, run numbers, round dots, marked runs.
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    chart = page.locator("#case-history-chart")
    expect(chart).to_be_visible()
    assert chart.locator("text.y-tick").all_text_contents() == ["0", "25", "50", "75", "100"]
    assert chart.locator("text.x-tick").all_text_contents() == [str(base), str(other), str(failed)]
    for dot in chart.locator("circle.dot").all():
        box = dot.bounding_box()
        assert box is not None and abs(box["width"] - box["height"]) < 0.5, box
    expect(chart.locator(f"[data-run-id='{other}']")).to_have_attribute("data-kind", "partial")
    expect(chart.locator(f"[data-run-id='{failed}']")).to_have_attribute("data-kind", "missing")
    expect(page.locator("#history .chart-legend")).to_contain_text("partial")
    run_row = page.locator(f"#runs tbody tr[data-run-id='{other}'] .run-knobs")
    expect(run_row).to_have_text("none")

    # The history opened directly is a page with the navigation.
    page.goto(f"{live_app.url}/cases/{live_app.case_id}/history")
    expect(page.locator("nav.mainnav")).to_be_visible()
    expect(page.locator("#case-history-chart")).to_be_visible()
    context.close()
