"""Adding a webhook from the alert form and alerting it, in a real browser (headless Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.live import EMAIL, LiveApp, login, seed, serving
from tests.fixtures.outbound import SUITE_HOSTS

pytestmark = pytest.mark.browser

DANGER = "rgb(180, 35, 24)"  # --danger in static/relevo.css


@pytest.fixture(scope="module")
def hooks_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    """Serve a fresh app with one user and a case (its engine is never called here)."""
    from app.config import Settings
    from app.main import create_app

    data_dir: Path = tmp_path_factory.mktemp("webhooks-app")
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=f"sqlite:///{data_dir}/relevo.db",
            secret_key="webhooks-test-secret",
        )
    )
    try:
        with serving(app) as url:
            factory = app.state.session_factory
            case_id, query_ids = seed(factory, "http://127.0.0.1:9/movies")
            yield LiveApp(url, case_id, query_ids, factory)
    finally:
        app.state.engine.dispose()


def test_a_webhook_is_added_from_the_alert_form_and_used_by_a_rule(
    browser: Any, hooks_app: LiveApp
) -> None:
    page = browser.new_page()
    try:
        login(page, hooks_app)
        page.goto(f"{hooks_app.url}/cases/{hooks_app.case_id}/watch")
        # No webhook yet: the alert form says so and leads to the page that adds one.
        page.click("#no-webhook a")
        page.wait_for_url(f"{hooks_app.url}/webhooks?case_id={hooks_app.case_id}")
        assert page.inner_text("#no-webhooks") == "No webhooks yet."
        page.fill("#webhook-form input[name=name]", "search-team Slack")
        page.fill("#webhook-form input[name=url]", "ftp://hooks.example.com/T1")
        page.fill("#webhook-form input[name=secret]", "s3cret")
        # The browser's own check lets an ftp:// URL through: the server's 422 keeps the typing.
        page.click("#webhook-form button[type=submit]")
        page.wait_for_selector("#webhook-error")
        assert page.input_value("#webhook-form input[name=name]") == "search-team Slack"
        page.fill("#webhook-form input[name=url]", "https://hooks.example.com/T1")
        page.fill("#webhook-form input[name=secret]", "s3cret")
        page.click("#webhook-form button[type=submit]")
        page.wait_for_selector("#webhook-list")
        row = page.locator("#webhook-list tbody tr")
        assert row.locator(".webhook-name").inner_text() == "search-team Slack"
        assert "s3cret" not in page.content()
        delete = row.locator("button.remove")
        assert delete.is_visible()
        assert delete.evaluate("b => getComputedStyle(b).color") == DANGER

        page.click("#back-to-alerts")
        page.wait_for_selector("#alert-webhooks input[name=webhook_ids]")
        page.select_option("#alert-form select[name=kind]", "significant_drop")
        page.check("#alert-webhooks input[name=webhook_ids]")
        page.click("#alert-form button[type=submit]")
        page.wait_for_selector("#alert-added")
        assert page.inner_text("#alert-added").startswith("Alert added: Significant drop.")
        rule = page.locator("#alert-rules li")
        assert rule.locator(".alert-kind").inner_text() == "Significant drop"
        assert rule.locator(".alert-targets").inner_text() == "search-team Slack"
        assert (
            rule.locator(".alert-note")
            .inner_text()
            .startswith("Fires only when at least 6 queries changed score")
        )
        remove = rule.locator("button.remove")
        assert remove.is_visible()
        assert remove.evaluate("b => getComputedStyle(b).color") == DANGER
        assert remove.evaluate("b => getComputedStyle(b).borderTopStyle") == "solid"
        remove.click()
        page.wait_for_selector("#alert-rules", state="detached")

        # The account page leads to the webhooks, where it is deleted.
        page.click(f"nav.mainnav a:text('{EMAIL}')")
        page.click("#account-webhooks a")
        page.wait_for_selector("#webhook-list")
        page.click("#webhook-list button.remove")
        page.wait_for_selector("#no-webhooks")
    finally:
        page.close()
