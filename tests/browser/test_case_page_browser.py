"""The case page in a real Chromium: run with live progress, keyboard rating, no-JS rating.

The app (fixture ``live_app``, tests/browser/conftest.py) runs under uvicorn in a background
thread on its own temporary SQLite database.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.db import session_scope
from app.queries import service as query_service
from app.queries.schemas import RatingIn
from app.queries.service import ratings_of
from app.web_common.templating import NO_VALUE
from tests.browser.live import ARTIFACTS, QUERIES, LiveApp
from tests.browser.live import login as _login

pytestmark = pytest.mark.browser


def _ratings(app: LiveApp, query_id: int) -> dict[str, float]:
    with session_scope(app.session_factory) as session:
        return ratings_of(session=session, query_ids=[query_id])[query_id]


def test_run_then_rate_with_the_keyboard(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#case-score-value")).to_have_text(NO_VALUE)

    page.click("#run-button")
    expect(page.locator("#run-progress")).to_have_attribute(
        "data-status", "finished", timeout=30_000
    )
    query_id = live_app.query_ids["star wars"]
    row = page.locator(f"#query-{query_id}")
    expect(row.locator(".num-found")).not_to_have_text(f"{NO_VALUE} found", timeout=10_000)
    expect(page.locator("#runs tbody tr[data-run-id]")).to_have_count(1)

    row.locator(".query-text").click()
    docs = page.locator(f"#results-{query_id} .doc")
    expect(docs.first).to_be_visible()
    assert "Star Wars" in docs.first.locator(".doc-title").inner_text()
    docs.first.focus()
    page.keyboard.press("j")
    expect(docs.nth(1)).to_be_focused()
    page.keyboard.press("k")
    expect(docs.first).to_be_focused()
    history_score = page.locator("#runs tbody tr .run-score").first
    recorded = history_score.inner_text()
    first_boxes = _button_boxes(docs.first)
    page.keyboard.press("0")  # Classic's scale is 1-10: 0 gives 10

    expect(page.locator(f"#query-score-{query_id}")).to_have_text("100")
    expect(page.locator("#case-score-value")).to_have_text("100")
    expect(docs.first.locator("button.rating.selected")).to_have_text("10")
    expect(docs.first).to_be_focused()
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    first_id = docs.first.get_attribute("data-doc-id")
    assert _ratings(live_app, query_id) == {first_id: 10.0}
    # Every button, the clear one included, is where it was before the rating.
    assert _button_boxes(docs.first) == first_boxes
    expect(docs.first.locator("button.clear")).to_be_visible()

    second = docs.nth(1)
    expect(second.locator(".unrated-mark")).to_have_text("unrated")
    second_boxes = _button_boxes(second)
    second.locator("button[data-digit='3']").click()
    expect(second.locator("button.rating.selected")).to_have_text("3")
    assert _button_boxes(second) == second_boxes
    expect(second.locator(".unrated-mark")).to_have_count(0)
    # The history row keeps the score the run finished with, whatever the ratings since.
    expect(history_score).to_have_text(recorded)

    # Show only rated: the two rated docs stay, the rest hide, also after the next rating.
    total = docs.count()
    assert total > 2
    page.check(f"#results-{query_id} input[data-only-rated]")
    visible = page.locator(f"#results-{query_id} .doc:visible")
    expect(visible).to_have_count(2)
    docs.first.locator("button[data-digit='5']").click()
    expect(docs.first.locator("button.rating.selected")).to_have_text("5")
    expect(visible).to_have_count(2)
    page.uncheck(f"#results-{query_id} input[data-only-rated]")
    expect(visible).to_have_count(total)

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "case-page.png"), full_page=True)
    context.close()


def _button_boxes(doc: Any) -> list[tuple[float, float, float, float]]:
    """The rating buttons' boxes in a result row (rounded: sub-pixel layout noise aside)."""
    boxes = []
    for button in doc.locator("form.rate button").all():
        box = button.bounding_box()
        assert box is not None
        boxes.append(tuple(round(box[key], 1) for key in ("x", "y", "width", "height")))
    return boxes


def test_rating_works_with_javascript_off(browser: Any, live_app: LiveApp) -> None:
    query_id = live_app.query_ids["batman"]
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    page.click("#run-button")  # a plain form post, answered with a redirect to the case
    page.wait_for_url(f"{live_app.url}/cases/{live_app.case_id}")
    deadline = time.monotonic() + 30
    while page.locator("#run-progress").get_attribute("data-status") in ("queued", "running"):
        assert time.monotonic() < deadline, "the run did not finish"
        time.sleep(0.2)
        page.reload()  # without JavaScript, progress is seen by reloading
    page.click(f"#query-{query_id} .query-text")  # a plain link to the query page
    page.wait_for_url(f"**/cases/{live_app.case_id}/queries/{query_id}")
    docs = page.locator(f"#results-{query_id} .doc")
    assert docs.count() >= 2
    second = docs.nth(1)
    doc_id = second.get_attribute("data-doc-id")
    second.locator("button[data-digit='7']").click()
    page.wait_for_load_state()
    assert (
        page.locator(f"#results-{query_id} .doc")
        .nth(1)
        .locator("button.rating.selected")
        .inner_text()
        == "7"
    )
    assert _ratings(live_app, query_id) == {doc_id: 7.0}
    assert page.locator(f"#query-score-{query_id}").inner_text() not in ("", NO_VALUE)
    context.close()


def test_switching_the_scorer_rescores_the_shown_scores_at_once(
    browser: Any, live_app: LiveApp
) -> None:
    from playwright.sync_api import expect

    from app.models import Case, Run, Scorer
    from app.queries import flows as rating_service
    from app.runs import service as run_service
    from app.web_common.templating import fmt_score

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    page.click("#run-button")
    expect(page.locator("#run-progress")).to_have_attribute(
        "data-status", "finished", timeout=30_000
    )
    query_id = live_app.query_ids["the matrix"]
    with session_scope(live_app.session_factory) as session:
        case = session.get(Case, live_app.case_id)
        assert case is not None
        run = run_service.latest_finished_run(session=session, case=case)
        assert run is not None
        row = next(
            r for r in run_service.run_queries(session=session, run=run) if r.query_id == query_id
        )
        query = query_service.get_query(session=session, case=case, query_id=query_id)
        user = case.owner
        top = [RatingIn(doc_id=str(d["id"]), rating=10) for d in row.docs[:2]]
        rating_service.rate(session=session, case=case, query=query, user=user, ratings=top)
    page.reload()
    expect(page.locator("#case-score .score-scorer")).to_have_text("Classic")

    page.select_option("#settings-form select[name=scorer_id]", label="P@10")
    page.click("#settings-form button[type=submit]")
    page.wait_for_url(f"{live_app.url}/cases/{live_app.case_id}?saved=settings#settings-saved")
    expect(page.locator("#settings-saved")).to_have_text("Settings saved.")
    with session_scope(live_app.session_factory) as session:
        latest = session.get(Run, run.id)
        p10 = session.query(Scorer).filter(Scorer.name == "P@10").one()
        assert latest is not None and latest.scorer_id == p10.id  # re-scored, not refetched
        want = fmt_score(latest.case_score)
        assert latest.case_score is not None
        classic = session.query(Scorer).filter(Scorer.name == "Classic").one()
        assert latest.recorded_scorer_id == classic.id  # what it finished with stays
        recorded = fmt_score(latest.recorded_score)
    expect(page.locator(".scorer-name")).to_have_text("P@10")
    expect(page.locator("#case-score .score-scorer")).to_have_text("P@10")
    expect(page.locator("#case-score-value")).to_have_text(want)
    expect(page.locator("#case-score .recorded-scorer")).to_have_text("Classic")
    # History keeps the run as it finished (before the ratings, under Classic).
    history_row = page.locator(f"#runs tr[data-run-id='{run.id}']")
    expect(history_row.locator(".run-scorer")).to_have_text("Classic")
    expect(history_row.locator(".run-score")).to_have_text(recorded)
    context.close()


def test_a_failed_run_shows_red_and_a_query_is_deleted_after_confirming(
    browser: Any, live_app: LiveApp
) -> None:
    from playwright.sync_api import expect

    from app.models import Case, Query, Run, RunQuery

    # A run in which every query errored (the engine was down), stored as the runner would.
    with session_scope(live_app.session_factory) as session:
        case = session.get(Case, live_app.case_id)
        assert case is not None
        run = Run(
            case_id=case.id,
            try_number=case.current_try_number,
            scorer_id=case.scorer_id,
            status="finished",
            total=len(QUERIES),
            done=len(QUERIES),
            errors=len(QUERIES),
        )
        session.add(run)
        session.flush()
        for position, text in enumerate(QUERIES):
            session.add(
                RunQuery(
                    run_id=run.id,
                    query_id=live_app.query_ids[text],
                    text=text,
                    position=position,
                    status="error",
                    error="Connection refused",
                    docs=[],
                )
            )
        session.commit()
        run_id = run.id
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _login(page, live_app)
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    status = page.locator(f"#runs tr[data-run-id='{run_id}'] td.status")
    expect(status).to_have_text("failed")
    # Red: the page's danger colour (#b42318), not the finished runs' green.
    assert status.evaluate("el => getComputedStyle(el).color") == "rgb(180, 35, 24)"
    finished = page.locator("#runs td.status-finished").first
    assert finished.evaluate("el => getComputedStyle(el).color") == "rgb(31, 122, 58)"
    query_id = live_app.query_ids["batman"]
    expect(page.locator(f"#query-error-{query_id}")).to_have_text("Connection refused")

    # Deleting asks first: dismissing keeps the query, accepting deletes it.
    page.goto(f"{live_app.url}/cases/{live_app.case_id}/queries/{query_id}")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#delete-query button")
    page.wait_for_timeout(300)
    with session_scope(live_app.session_factory) as session:
        assert session.get(Query, query_id) is not None
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-query button")
    page.wait_for_url(f"{live_app.url}/cases/{live_app.case_id}")
    expect(page.locator(f"#query-{query_id}")).to_have_count(0)
    with session_scope(live_app.session_factory) as session:
        assert session.get(Query, query_id) is None
    context.close()
