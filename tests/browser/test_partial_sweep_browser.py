"""A partial run in a real Chromium: a sweep whose engine fails on 4 of 25 queries for one
combination marks that run amber ("21 of 25 queries"), never names it best, and applies it
only after a confirmation."""

from __future__ import annotations

from typing import Any

import pytest

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.models import Rating
from app.queries import service as query_service
from app.scorers import service as scorer_service
from tests.browser.live import EMAIL, LiveApp
from tests.browser.live import login as _login
from tests.support.flaky_engine import TEMPLATE, flaky_engine

pytestmark = pytest.mark.browser

TEXTS = [f"query {n}" for n in range(25)]
HARD = {"query 3", "query 8", "query 13", "query 21"}


def _flaky_case(app: LiveApp, url: str) -> int:
    with session_scope(app.session_factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        assert user is not None
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="flaky", engine="opensearch", url=url),
        )
        ndcg = next(
            s
            for s in scorer_service.scorer_options(session=session, user=user)
            if s.name == "NDCG@10"
        )
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name="Flaky",
                search_endpoint_id=endpoint.id,
                query_template=TEMPLATE,
                knobs={"k": 1},
                scorer_id=ndcg.id,
            ),
        )
        for query in query_service.add_queries(session=session, case=case, texts=TEXTS):
            session.add(Rating(query_id=query.id, doc_id="good", rating=3))
            session.add(Rating(query_id=query.id, doc_id="bad", rating=0))
        session.commit()
        return case.id


def test_a_partial_sweep_run_is_marked_not_best_and_applied_only_when_confirmed(
    browser: Any, live_app: LiveApp
) -> None:
    from playwright.sync_api import expect

    with flaky_engine(HARD) as url:
        case_id = _flaky_case(live_app, url)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        _login(page, live_app)
        page.goto(f"{live_app.url}/cases/{case_id}")
        page.fill("input[name='sweep.k']", "1, 2")
        page.click("#sweep-start")
        page.wait_for_url("**/sweeps/*")
        expect(page.locator("#sweep-results")).to_have_attribute(
            "data-status", "finished", timeout=60_000
        )
    rows = page.locator("#sweep-table tbody tr")
    expect(rows).to_have_count(2)
    whole, partial = rows.nth(0), rows.nth(1)
    assert page.locator("#sweep-best").get_attribute("data-run-id") == whole.get_attribute(
        "data-run-id"
    )
    expect(partial).not_to_have_class("sweep-best")
    expect(partial.locator(".case-score")).to_have_text("100 · 21 of 25 queries")
    expect(partial.locator(".badge")).to_have_class("badge score-partial")
    expect(partial.locator("td.errors")).to_have_text("4")
    expect(whole.locator("td.errors")).to_have_text("0")
    expect(page.locator("#sweep-partial-rule")).to_be_visible()
    # Amber, not the green a 100 would get.
    colour = partial.locator(".badge").evaluate("b => getComputedStyle(b).backgroundColor")
    assert colour == "rgb(138, 90, 0)"

    partial.locator("button.apply").click()
    expect(page.locator("#confirm-partial")).to_contain_text("21 of its 25 queries")
    page.click("#confirm-partial-apply")
    page.wait_for_url(f"{live_app.url}/cases/{case_id}")
    expect(page.locator("input[name='knob.k']")).to_have_value("2")
    # The case's score is the partial run's: marked on the case page and in the cases list.
    expect(page.locator("#case-score .score-coverage")).to_have_text("· 21 of 25 queries")
    page.goto(f"{live_app.url}/")
    row = page.locator(f"tr.case-row[data-case-id='{case_id}']")
    expect(row.locator(".case-score")).to_have_text("100 · 21 of 25 queries")
    context.close()
