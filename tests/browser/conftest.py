"""The browser tests' fixtures: one headless Chromium and one served app per module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from tests.browser.live import CHROMIUM, CHROMIUM_ARGS, LiveApp, fresh_app, seed, serving


@pytest.fixture(scope="module")
def live_app(tmp_path_factory: pytest.TempPathFactory, movies_engine: Any) -> Iterator[LiveApp]:
    """Serve a fresh app on its own SQLite database; seed a user, an endpoint and a case."""
    app = fresh_app(tmp_path_factory, "browser-app")
    with serving(app) as url:
        factory: sessionmaker[Session] = app.state.session_factory
        case_id, query_ids = seed(factory, movies_engine.index_url)
        yield LiveApp(url, case_id, query_ids, factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Launch Debian's Chromium headless (skipped when it is not installed, failed in CI)."""
    if not CHROMIUM.exists():
        message = (
            "Chromium not found at /usr/bin/chromium: "
            "apt-get install -y chromium to run the browser tests"
        )
        if os.environ.get("RELEVO_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()
