"""Importing a Quepid case from the cases list in a real browser, then running it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.accounts import service as user_service
from app.db import session_scope
from tests.browser.live import PASSWORD, serving
from tests.support.quepid import fixture

pytestmark = pytest.mark.browser

EMAIL = "mover@example.com"


@dataclass(frozen=True)
class ImportApp:
    url: str
    engine_index_url: str


@pytest.fixture(scope="module")
def import_app(tmp_path_factory: pytest.TempPathFactory, movies_engine: Any) -> Iterator[ImportApp]:
    """Serve a fresh app with one user and nothing else."""
    from app.config import Settings
    from app.main import create_app
    from tests.fixtures.outbound import SUITE_HOSTS

    data_dir: Path = tmp_path_factory.mktemp("quepid-import-app")
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=f"sqlite:///{data_dir}/relevo.db",
            secret_key="quepid-import-test-secret",
        )
    )
    try:
        with serving(app) as url:
            with session_scope(app.state.session_factory) as session:
                user_service.create_user(session=session, email=EMAIL, password=PASSWORD)
            yield ImportApp(url, movies_engine.index_url)
    finally:
        app.state.engine.dispose()


def test_import_a_quepid_case_then_run_it(
    browser: Any, import_app: ImportApp, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    data = fixture("movies_es_case.json")
    data["try"]["search_endpoint"]["endpoint_url"] = f"{import_app.engine_index_url}/_search"
    good = tmp_path / "movies-case.json"
    good.write_text(json.dumps(data))
    bad = tmp_path / "not-a-case.json"
    bad.write_text(json.dumps({"queries": [{"query": "star wars", "ratings": {"2906": 1}}]}))

    page = browser.new_page()
    try:
        page.goto(f"{import_app.url}/login")
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_url(f"{import_app.url}/")

        # A Quepid ratings export is not a case export: the page says which key is missing.
        page.set_input_files("#quepid-import-form input[type=file]", str(bad))
        page.click("#quepid-import-form button[type=submit]")
        expect(page.locator("#quepid-import-problem")).to_have_text(
            'This is not a Quepid case export: "case_name" is missing.'
        )

        page.set_input_files("#quepid-import-form input[type=file]", str(good))
        page.click("#quepid-import-form button[type=submit]")
        # The import's result comes first: what was imported, then a link to the case.
        expect(page.locator("#open-case")).to_be_visible()
        page.click("#open-case")
        page.wait_for_url(f"{import_app.url}/cases/*")
        expect(page.locator("h1")).to_contain_text("Movies: title boosts")
        page.click("#run-button")
        expect(page.locator("#run-progress")).to_have_attribute(
            "data-status", "finished", timeout=30_000
        )
        expect(page.locator("#case-score-value")).to_have_text("37", timeout=10_000)
    finally:
        page.close()
