"""The knob sweep form in a real Chromium: a refused sweep comes back to the case page,
scrolled to the form, the message under the knob's box and the values typed kept."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.models import Case, Sweep
from tests.browser.live import LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser


KNOB_TEMPLATE = (
    '{"query": {"multi_match": {"query": "#$query##", '
    '"fields": ["title^##titleBoost##", "overview^##overviewBoost##"]}}}'
)


def _knob_case(app: LiveApp) -> int:
    """Add a case whose template has two knobs, beside the seeded one; return its id."""
    with session_scope(app.session_factory) as session:
        seeded = session.get(Case, app.case_id)
        assert seeded is not None
        current = case_service.current_try(session=session, case=seeded)
        case = case_service.create_case(
            session=session,
            user=seeded.owner,
            body=CaseCreate(
                name="Movies with knobs",
                search_endpoint_id=current.search_endpoint_id,
                query_template=KNOB_TEMPLATE,
            ),
        )
        return case.id


def test_a_refused_sweep_comes_back_under_its_knob(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    case_id = _knob_case(live_app)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/cases/{case_id}")
        form = page.locator("#sweep-form")
        form.locator("input[name='sweep.titleBoost']").fill("1, lots")
        form.locator("input[name='sweep.overviewBoost']").fill("2, 3")
        page.click("#sweep-start")
        page.wait_for_url(f"{live_app.url}/cases/{case_id}/sweeps#sweep")

        error = page.locator("#sweep-form p.field-error")
        expect(error).to_have_count(1)
        expect(error).to_have_text(
            "Knob titleBoost: 'lots' is not a number; write the values to try separated by "
            "commas, e.g. 1, 5, 10."
        )
        expect(page.locator("#sweep-errors p")).to_have_text(
            "Cannot start the sweep: 1 problem to fix."
        )
        box = form.locator("input[name='sweep.titleBoost']")
        expect(box).to_have_value("1, lots")
        expect(form.locator("input[name='sweep.overviewBoost']")).to_have_value("2, 3")
        expect(box).to_have_attribute("aria-invalid", "true")
        # The message sits right under its own box, in the same column.
        field_box, error_box = box.bounding_box(), error.bounding_box()
        assert field_box is not None and error_box is not None
        assert 0 <= error_box["y"] - (field_box["y"] + field_box["height"]) < 40
        assert abs(error_box["x"] - field_box["x"]) < 20
        # The page opens at the sweep form, with the site's navigation still there.
        expect(error).to_be_in_viewport()
        expect(page.locator("nav.mainnav a", has_text="Cases")).to_have_count(1)

        # Fixed in place, the same form starts the sweep.
        box.fill("1, 5")
        page.click("#sweep-start")
        page.wait_for_url(f"{live_app.url}/cases/{case_id}/sweeps/*")
        with session_scope(live_app.session_factory) as session:
            sweep = session.scalars(select(Sweep).where(Sweep.case_id == case_id)).one()
            assert sweep.grid == {"titleBoost": [1.0, 5.0], "overviewBoost": [2.0, 3.0]}
    finally:
        context.close()
