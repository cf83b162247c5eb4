"""The endpoint page in a real Chromium: only the chosen engine's fields show, and a
result upload lands on its outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.accounts import service as user_service
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from tests.browser.live import EMAIL, LiveApp
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


def test_a_result_upload_lands_on_its_outcome(
    browser: Any, live_app: LiveApp, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    with session_scope(live_app.session_factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        assert user is not None
        endpoint = endpoint_service.create_endpoint(
            session=session, user=user, body=EndpointCreate(name="offline", engine="static")
        )
        endpoint_id = endpoint.id
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 oops\n")
    context = browser.new_context(viewport={"width": 1280, "height": 700})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/endpoints/{endpoint_id}")
        page.set_input_files("#results-form input[type=file]", str(bad))
        page.click("#results-form button[type=submit]")
        page.wait_for_url(f"{live_app.url}/endpoints/{endpoint_id}?upload=*#results-problem")
        problem = page.locator("#results-problem")
        expect(problem).to_contain_text("line 2")
        expect(problem).to_be_in_viewport()  # where the page lands, not below the fold
        # A refresh shows the same outcome and uploads nothing (no resubmission prompt).
        page.reload()
        expect(page.locator("#results-problem")).to_contain_text("line 2")
    finally:
        context.close()


def test_picking_an_endpoint_for_a_new_case_swaps_in_its_template(
    browser: Any, live_app: LiveApp
) -> None:
    from playwright.sync_api import expect

    with session_scope(live_app.session_factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        assert user is not None
        static = endpoint_service.create_endpoint(
            session=session, user=user, body=EndpointCreate(name="zz file", engine="static")
        )
        static_id = str(static.id)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/")
        select = "#new-case-form select[name=search_endpoint_id]"
        area = page.locator("#new-case-template")
        first = area.input_value()
        assert "multi_match" in first or "#$query##" in first
        page.select_option(select, static_id)
        expect(area).to_have_value("#$query##")
        page.select_option(select, index=0)
        expect(area).to_have_value(first)
        # A template the person wrote stays whatever is picked.
        area.fill('{"query": {"match_all": {}}}')
        page.select_option(select, static_id)
        expect(area).to_have_value('{"query": {"match_all": {}}}')
    finally:
        context.close()
