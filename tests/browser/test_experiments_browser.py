"""Sweep, compare statistics and coverage in a real Chromium (Debian's /usr/bin/chromium)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app import access
from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.models import Rating, RunQuery
from app.queries import service as query_service
from tests.browser.live import EMAIL, LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser

TEMPLATE = (
    '{"query": {"bool": {"must": [{"match": {"title": {"query": "#$query##", "boost": ##t##}}}], '
    '"should": [{"term": {"genre": {"value": "Comedy", "boost": ##g##}}}]}}}'
)


def _knob_case(app: LiveApp) -> int:
    with session_scope(app.session_factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        assert user is not None
        first = access.visible_cases(session=session, user=user)[0]
        endpoint_id = case_service.current_try(session=session, case=first).search_endpoint_id
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name="Knobs",
                search_endpoint_id=endpoint_id,
                query_template=TEMPLATE,
                knobs={"t": 1, "g": 0},
            ),
        )
        query_service.add_queries(session=session, case=case, texts=["love", "man", "night"])
        return case.id


def _rate_run(app: LiveApp, run_id: int) -> None:
    """Rate the top docs of every query of the run on Classic's 1-10 scale."""
    with session_scope(app.session_factory) as session:
        rows = session.scalars(select(RunQuery).where(RunQuery.run_id == run_id)).all()
        for row in rows:
            for i, doc in enumerate(row.docs[:6]):
                session.add(
                    Rating(query_id=row.query_id, doc_id=doc["id"], rating=10 - 3 * (i % 4))
                )
        session.commit()


def test_sweep_compare_and_coverage(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    case_id = _knob_case(live_app)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{case_id}")
    page.click("#run-button")
    expect(page.locator("#run-progress")).to_have_attribute(
        "data-status", "finished", timeout=30_000
    )
    run_id = int(page.locator("#runs tbody tr[data-run-id]").first.get_attribute("data-run-id"))
    _rate_run(live_app, run_id)

    # A sweep over two knobs: heatmap, best highlighted, then apply.
    page.goto(f"{live_app.url}/cases/{case_id}")
    page.fill("input[name='sweep.g']", "0, 40")
    page.fill("input[name='sweep.t']", "1, 3")
    page.click("#sweep-start")
    page.wait_for_url("**/sweeps/*")
    expect(page.locator("#sweep-results")).to_have_attribute(
        "data-status", "finished", timeout=60_000
    )
    expect(page.locator("#sweep-heatmap td.cell")).to_have_count(4)
    expect(page.locator("#sweep-table tbody tr.sweep-best")).to_have_count(1)
    best_run = page.locator("#sweep-best").get_attribute("data-run-id")
    assert best_run == page.locator("#sweep-table tr.sweep-best").get_attribute("data-run-id")
    sweep_runs = page.locator("#sweep-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.runId)"
    )
    page.locator("#sweep-table tbody tr").last.locator("button.apply").click()
    page.wait_for_url(f"{live_app.url}/cases/{case_id}")
    expect(page.locator("input[name='knob.g']")).to_have_value("40")

    # Compare two of the sweep's runs: the statistics in words, small n marked.
    page.goto(f"{live_app.url}/cases/{case_id}/compare?base={sweep_runs[0]}&other={sweep_runs[-1]}")
    expect(page.locator("#stats-summary")).to_contain_text("points")
    expect(page.locator("#stats-summary")).to_contain_text("over 3 queries")
    expect(page.locator("#small-sample")).to_be_visible()
    expect(page.locator("#compare-queries td.rbo").first).not_to_have_text("\u2013")
    page.locator("#compare-queries td.rbo a").first.click()
    page.wait_for_url("**/compare/queries/*")
    marks = page.locator(".side-doc").evaluate_all("docs => docs.map(d => d.dataset.mark)")
    assert marks and set(marks) <= {"same", "moved", "new", "dropped"}

    # Coverage: from the case page to the list of docs to rate next.
    page.goto(f"{live_app.url}/cases/{case_id}")
    page.click("#coverage-link")
    page.wait_for_url(f"{live_app.url}/cases/{case_id}/coverage")
    expect(page.locator("#rate-next li").first).to_be_visible()
    expect(page.locator("#coverage-queries tbody tr")).to_have_count(3)
    band = page.locator("#coverage-case-band")
    assert float(band.get_attribute("data-min")) <= float(band.get_attribute("data-max"))
    context.close()
