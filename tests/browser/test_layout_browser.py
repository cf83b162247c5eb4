"""Layout a keyboard user and a reader of the query list rely on, in a real Chromium: the skip
link appears on the first Tab and moves focus to the content; query badges are equally wide
whatever their digits."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.db import session_scope
from app.models import Case
from tests.browser.live import LiveApp
from tests.browser.live import login as _login
from tests.support.pages import doc, finished_run

pytestmark = pytest.mark.browser


def test_skip_link_and_equal_badges(browser: Any, live_app: LiveApp) -> None:
    with session_scope(live_app.session_factory) as session:
        scorer = session.scalars(select(Case.scorer_id).where(Case.id == live_app.case_id)).one()
    ids = live_app.query_ids
    finished_run(
        live_app.session_factory,
        live_app.case_id,
        {
            ids["star wars"]: {"score": 100.0, "docs": [doc("1", "A New Hope", 1)]},
            ids["batman"]: {"score": 5.0, "docs": [doc("2", "Batman", 1)]},
            ids["the matrix"]: {"status": "unscored", "docs": []},
        },
        scorer=scorer,
        case_score=52.5,
    )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/cases/{live_app.case_id}")
        texts = [page.inner_text(f"#query-score-{ids[q]}") for q in ids]
        assert texts == ["100", "5", "\u2013"]
        widths = {
            round(page.locator(f"#query-score-{ids[q]}").bounding_box()["width"], 1) for q in ids
        }
        assert len(widths) == 1, widths

        skip = page.locator("a.skip-link")
        assert skip.bounding_box()["x"] < 0  # out of sight until focused
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip-link"
        assert skip.bounding_box()["x"] >= 0
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "main"
    finally:
        context.close()


LONG_SPEC = "id:_id title:title director genre release_date imdb_rating mpaa_rating thumb:poster"


def test_field_spec_and_endpoint_inputs_show_their_whole_value(
    browser: Any, live_app: LiveApp
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        fits = "el => el.scrollWidth <= el.clientWidth"
        page.goto(f"{live_app.url}/cases/{live_app.case_id}")
        spec = page.locator("#settings-form input[name=field_spec]")
        spec.fill(LONG_SPEC)
        assert spec.evaluate(fits)
        page.goto(f"{live_app.url}/")
        new_spec = page.locator("#new-case-form input[name=field_spec]")
        new_spec.fill(LONG_SPEC)
        assert new_spec.evaluate(fits)
        page.goto(f"{live_app.url}/endpoints/new")
        url = page.locator("#endpoint-form input[name=url]")
        url.fill("http://search-cluster.internal.example.com:9200/movies-2026-11-25-v3")
        assert url.evaluate(fits)
    finally:
        context.close()
