"""Forms in a real Chromium: the scorer editor adapts to the kind, and a refused settings form
shows each error next to its field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.live import LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser


def test_the_new_scorer_form_follows_the_kind(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/scorers/new")
        code, params = page.locator("textarea[name=code]"), page.locator("textarea[name=params]")
        environment = page.locator("select[name=environment]")
        expect(code).to_be_visible()
        expect(environment).to_be_visible()
        expect(params).to_be_hidden()

        page.select_option("#scorer-kind", "ndcg")
        expect(code).to_be_hidden()
        expect(environment).to_be_hidden()
        expect(page.locator("input[name=max_score]")).to_be_hidden()
        expect(params).to_be_visible()
        expect(page.locator("input[name=scale]")).to_have_value("0, 1, 2, 3")
        expect(page.locator("textarea[name=labels]")).to_have_value(
            "0=Poor\n1=Fair\n2=Good\n3=Perfect"
        )
        page.select_option("#scorer-kind", "classic")
        expect(page.locator("input[name=scale]")).to_have_value("1, 2, 3, 4, 5, 6, 7, 8, 9, 10")

        page.select_option("#scorer-kind", "javascript")
        expect(code).to_be_visible()
        page.select_option("#scale-preset", "binary")
        expect(page.locator("input[name=scale]")).to_have_value("0, 1")
        expect(page.locator("textarea[name=labels]")).to_have_value("0=Irrelevant\n1=Relevant")
        page.select_option("select[name=environment]", "quepid")
        page.fill("input[name=name]", "Binary hits")
        page.click("#scorer-form button[value=save]")
        page.wait_for_url("**/scorers/*?saved=1")
        expect(page.locator("#saved")).to_have_text("Saved.")
        expect(page.locator("select[name=environment]")).to_have_value("quepid")
    finally:
        context.close()


def test_settings_errors_sit_next_to_their_fields(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/cases/{live_app.case_id}")
        form = page.locator("#settings-form")
        form.locator("input[name=name]").evaluate("el => el.removeAttribute('required')")
        form.locator("input[name=rows]").evaluate("el => { el.min = ''; el.max = ''; }")
        form.locator("input[name=name]").fill("")
        form.locator("input[name=rows]").fill("0")
        form.locator("button[type=submit]").click()
        name_error = page.locator("#error-name")
        rows_error = page.locator("#error-rows")
        expect(name_error).to_have_text("Name is required.")
        expect(rows_error).to_have_text("Rows must be a whole number from 1 to 500.")
        expect(page.locator(".form-errors li")).to_have_count(2)
        # Each message sits right under its field, and the field points at it.
        for field, error in (("name", name_error), ("rows", rows_error)):
            box = page.locator(f"#settings-form [name={field}]")
            expect(box).to_have_attribute("aria-invalid", "true")
            expect(box).to_have_attribute("aria-describedby", f"error-{field}")
            field_box, error_box = box.bounding_box(), error.bounding_box()
            assert field_box is not None and error_box is not None
            assert 0 <= error_box["y"] - (field_box["y"] + field_box["height"]) < 40
    finally:
        context.close()
