"""The case page's tools in a real Chromium: rated docs the run did not return, inline notes.

Shares the case page's fixtures: a live app on the demo movies and Debian's Chromium.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from app.db import session_scope
from app.models import Query, Rating, RunQuery
from tests.browser.live import ARTIFACTS, LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser


LONE_STAR, GONE = "555", "no-such-movie-42"


def _rate_behind_the_pages_back(app: LiveApp, query_id: int, ratings: dict[str, float]) -> None:
    with session_scope(app.session_factory) as session:
        returned = {
            str(d["id"])
            for docs in session.scalars(select(RunQuery.docs).where(RunQuery.query_id == query_id))
            for d in docs or []
        }
        assert not returned & set(ratings), "the rated docs must not be among the results"
        session.add_all(Rating(query_id=query_id, doc_id=d, rating=r) for d, r in ratings.items())
        session.commit()


def _stored(app: LiveApp, query_id: int) -> tuple[dict[str, float], str | None]:
    with session_scope(app.session_factory) as session:
        ratings = dict(
            session.execute(
                select(Rating.doc_id, Rating.rating).where(Rating.query_id == query_id)
            ).all()
        )
        notes = session.scalar(select(Query.notes).where(Query.id == query_id))
        return ratings, notes


def test_rated_but_not_returned_then_notes_in_place(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    query_id = live_app.query_ids["batman"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    page.click("#run-button")
    expect(page.locator("#run-progress")).to_have_attribute(
        "data-status", "finished", timeout=30_000
    )
    _rate_behind_the_pages_back(live_app, query_id, {LONE_STAR: 7, GONE: 4})
    page.reload()
    page.evaluate("window.__sameDocument = true")

    row = page.locator(f"#query-{query_id}")
    row.locator(".query-text").click()
    details = page.locator(f"#rated-missing-{query_id}")
    expect(details.locator("summary")).to_have_text("Rated but not returned (2)")
    details.locator("summary").click()
    lone = details.locator(f"li.missing-doc.not-returned[data-doc-id='{LONE_STAR}']")
    expect(lone.locator(".doc-title")).to_have_text("Lone Star")
    expect(lone.locator(".missing-mark")).to_have_text("rated, not returned")
    expect(lone.locator("button.rating.selected")).to_have_text("7")
    gone = details.locator(f"li.missing-doc.not-found[data-doc-id='{GONE}']")
    expect(gone.locator(".not-found-mark")).to_have_text("not found in the index")

    lone.locator("button[data-digit='3']").click()
    # The results re-render; the list stays open and loads again with the new rating.
    lone = page.locator(f"#rated-missing-{query_id} li.missing-doc[data-doc-id='{LONE_STAR}']")
    expect(lone.locator("button.rating.selected")).to_have_text("3")
    expect(page.locator(f"#rated-missing-{query_id}")).to_have_attribute("open", "")
    assert _stored(live_app, query_id)[0] == {LONE_STAR: 3.0, GONE: 4.0}
    # By key too: the focus comes back to the same doc once its list has loaded again.
    lone.focus()
    page.keyboard.press("5")
    expect(lone.locator("button.rating.selected")).to_have_text("5")
    expect(lone).to_be_focused()
    assert _stored(live_app, query_id)[0] == {LONE_STAR: 5.0, GONE: 4.0}

    editor = row.locator(f"#query-notes-{query_id}")
    editor.locator("summary").click()
    editor.locator("textarea[name=notes]").fill("Check the 1989 film ranks first")
    editor.locator("button[type=submit]").click()
    editor = page.locator(f"#query-notes-{query_id}")
    expect(editor.locator(".saved")).to_have_text("Saved.")
    expect(editor.locator(".notes-preview")).to_have_text("Check the 1989 film ranks first")
    assert _stored(live_app, query_id)[1] == "Check the 1989 film ranks first"
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "case-tools.png"), full_page=True)
    context.close()


def test_unsaved_notes_survive_the_query_list_reloading(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    query_id = live_app.query_ids["the matrix"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/cases/{live_app.case_id}")
        editor = page.locator(f"#query-notes-{query_id}")
        editor.locator("summary").click()
        editor.locator("textarea[name=notes]").fill("Half-written thought")
        # What a finished run does: the query list reloads from the server.
        with page.expect_response(lambda r: "/query-list" in r.url):
            page.evaluate("htmx.trigger(document.body, 'run-finished')")
        editor = page.locator(f"#query-notes-{query_id}")
        expect(editor.locator("textarea[name=notes]")).to_have_value("Half-written thought")
        expect(editor.locator("details")).to_have_attribute("open", "")
        assert _stored(live_app, query_id)[1] is None  # still unsaved: nothing was posted
    finally:
        context.close()
