"""The Teams page and the "Shared with" control in a real browser (headless Chromium)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.books import service as book_service
from app.books.schemas import BookCreate
from app.db import session_scope
from app.models import Book
from tests.browser.live import PASSWORD, serving

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class TeamsApp:
    url: str
    book_id: int
    factory: sessionmaker[Session]


@pytest.fixture(scope="module")
def teams_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamsApp]:
    """Serve a fresh app with two users; the first has a book."""
    from app.config import Settings
    from app.main import create_app
    from tests.fixtures.outbound import SUITE_HOSTS

    data_dir: Path = tmp_path_factory.mktemp("teams-app")
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=f"sqlite:///{data_dir}/relevo.db",
            secret_key="teams-test-secret",
        )
    )
    factory: sessionmaker[Session] = app.state.session_factory
    try:
        with serving(app) as url:  # the app migrates its database as it starts
            with session_scope(factory) as session:
                ann = user_service.create_user(
                    session=session, email="ann@example.com", password=PASSWORD
                )
                user_service.create_user(
                    session=session, email="ben@example.com", password=PASSWORD
                )
                book = book_service.create_book(
                    session=session, user=ann, body=BookCreate(name="Films", scale=[0, 1, 2])
                )
                book_id = book.id
            yield TeamsApp(url, book_id, factory)
    finally:
        app.state.engine.dispose()


def test_create_a_team_add_a_member_and_share_a_book(browser: Any, teams_app: TeamsApp) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{teams_app.url}/login")
        page.fill("input[name=email]", "ann@example.com")
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_url(f"{teams_app.url}/")
        page.click("nav.mainnav a:text('Teams')")
        page.wait_for_selector("#no-teams")
        page.fill("#new-team-form input[name=name]", "Relevance")
        page.click("#new-team-form button[type=submit]")
        page.wait_for_selector(".team .team-name:text('Relevance')")
        page.fill(".add-member input[name=email]", "ben@example.com")
        page.click(".add-member button[type=submit]")
        page.wait_for_selector(".member-email:text('ben@example.com')")
        assert page.locator(".member-email").all_inner_texts() == [
            "ann@example.com",
            "ben@example.com",
        ]
        page.fill(".add-member input[name=email]", "nobody@example.com")
        page.click(".add-member button[type=submit]")
        assert page.inner_text("#team-error") == "No user with the email 'nobody@example.com'."

        # The book page loads its "Shared with" form with htmx; saving swaps it in place.
        page.goto(f"{teams_app.url}/books/{teams_app.book_id}")
        box = page.locator(".shared-with input[name=team_id]")
        box.wait_for()
        assert not box.is_checked()
        box.check()
        page.click(".shared-with button[type=submit]")
        page.wait_for_selector(".shared-with input[name=team_id]:checked")
        assert page.url == f"{teams_app.url}/books/{teams_app.book_id}"
        # The box was ticked in the browser before the request went: wait for the save itself.
        assert _book_teams(teams_app, wait_for=["Relevance"]) == ["Relevance"]
    finally:
        page.close()


def _book_teams(teams_app: TeamsApp, wait_for: list[str], timeout_s: float = 5) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        with session_scope(teams_app.factory) as session:
            book = session.get(Book, teams_app.book_id)
            assert book is not None
            names = [t.name for t in book.teams]
        if names == wait_for or time.monotonic() > deadline:
            return names
        time.sleep(0.05)
