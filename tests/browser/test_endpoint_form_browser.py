"""The endpoint form in a real Chromium: only the chosen engine's fields show."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.live import LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser

ALL_HTTP = ("url", "timeout_s", "requests_per_minute", "max_concurrency", "headers")


def test_the_endpoint_form_shows_only_the_chosen_engines_fields(
    browser: Any, live_app: LiveApp
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/endpoints/new")

        def field(name: str) -> Any:
            return page.locator(f"#endpoint-form [name={name}]")

        # OpenSearch, the form's default: no method, no mapper code.
        for name in ALL_HTTP:
            expect(field(name)).to_be_visible()
        expect(field("method")).to_be_hidden()
        expect(field("mapper_code")).to_be_hidden()

        page.select_option("#endpoint-form select[name=engine]", "searchapi")
        for name in (*ALL_HTTP, "method", "mapper_code"):
            expect(field(name)).to_be_visible()

        page.select_option("#endpoint-form select[name=engine]", "static")
        for name in (*ALL_HTTP, "method", "mapper_code", "basic_auth"):
            expect(field(name)).to_be_hidden()
        expect(field("name")).to_be_visible()
        expect(page.locator("#endpoint-form [data-engines=static]")).to_be_visible()

        page.select_option("#endpoint-form select[name=engine]", "solr")
        expect(field("method")).to_be_visible()
        expect(field("mapper_code")).to_be_hidden()

        # A static endpoint is made with the visible fields alone.
        page.select_option("#endpoint-form select[name=engine]", "static")
        page.fill("#endpoint-form input[name=name]", "trec run")
        page.click("#endpoint-form button[type=submit]")
        expect(page.locator("#saved")).to_have_text("Saved.")
        expect(page.locator("#save-note")).to_be_visible()
        expect(page.locator("#save-warning")).to_have_count(0)
        expect(field("url")).to_be_hidden()  # a stored endpoint's form too
    finally:
        context.close()
