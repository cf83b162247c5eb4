"""The metric panel and the tag filter in a real Chromium (Debian's /usr/bin/chromium).

The app runs under uvicorn in a background thread on its own temporary SQLite database.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Scorer, User
from app.queries import service as query_service
from app.queries.schemas import RatingIn
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.web_common.templating import NO_VALUE
from tests.browser.live import fresh_app, seed, serving

pytestmark = pytest.mark.browser

EMAIL, PASSWORD = "metrics@example.com", "correct horse battery"
LINES = ["star wars\thead,scifi\t3", "batman\thead", "the matrix\ttail,scifi"]


@dataclass(frozen=True)
class LiveApp:
    url: str
    case_id: int
    query_ids: dict[str, int]
    session_factory: sessionmaker[Session]


def _preset(session: Session, name: str) -> int:
    return next(
        s.id for s in session.query(Scorer).filter(Scorer.owner_id.is_(None)) if s.name == name
    )


def _seed(factory: sessionmaker[Session], index_url: str) -> tuple[int, dict[str, int]]:
    with session_scope(factory) as session:
        ndcg, p10, err = (_preset(session, n) for n in ("NDCG@10", "P@10", "ERR@10"))
    return seed(
        factory,
        index_url,
        email=EMAIL,
        name="Metrics",
        field_spec="id:_id title:title",
        texts=LINES,
        scorer_id=ndcg,
        metric_scorer_ids=[p10, err],
    )


@pytest.fixture(scope="module")
def live_app(tmp_path_factory: pytest.TempPathFactory, movies_engine: Any) -> Iterator[LiveApp]:
    """Serve a fresh app with uvicorn in a thread; seed a user, an endpoint and a case."""
    app = fresh_app(tmp_path_factory, "metrics-app")
    with serving(app) as url:
        factory: sessionmaker[Session] = app.state.session_factory
        case_id, query_ids = _seed(factory, movies_engine.index_url)
        yield LiveApp(url, case_id, query_ids, factory)


def _rate_top_docs(app: LiveApp) -> None:
    """Rate each query's first two results of the latest run, then re-score it."""
    with session_scope(app.session_factory) as session:
        case = session.get(Case, app.case_id)
        user = session.query(User).filter(User.email == EMAIL).one()
        assert case is not None
        run = run_service.latest_finished_run(session=session, case=case)
        assert run is not None
        for row in run_service.run_queries(session=session, run=run):
            query = query_service.get_query(session=session, case=case, query_id=row.query_id or 0)
            grades = [3, 1] if row.text != "batman" else [0, 2]
            ratings = [
                RatingIn(doc_id=d["id"], rating=g) for d, g in zip(row.docs, grades, strict=False)
            ]
            query_service.set_ratings(
                session=session, query=query, scorer=case.scorer, ratings=ratings, user=user
            )
        rescoring.rescore_run(session=session, run=run)


def test_the_metric_panel_and_the_tag_filter(browser: Any, live_app: LiveApp) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{live_app.url}/login")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{live_app.url}/")
    page.goto(f"{live_app.url}/cases/{live_app.case_id}")
    expect(page.locator("#metric-panel")).to_have_count(0)  # no run yet
    page.click("#run-button")
    expect(page.locator("#run-progress")).to_have_attribute(
        "data-status", "finished", timeout=30_000
    )
    _rate_top_docs(live_app)
    page.reload()

    tiles = page.locator("#metric-panel .metric-tile .metric-name")
    expect(tiles).to_have_text(["NDCG@10", "P@10", "ERR@10"])
    expect(page.locator("#metric-panel .metric-tile.primary .badge")).not_to_have_text(NO_VALUE)
    rows = page.locator("#tag-table tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#tag-table tr[data-tag='head'] td").first).to_have_attribute(
        "data-count", "2"
    )
    expect(page.locator("#query-list li.query")).to_have_count(3)

    page.evaluate("window.__sameDocument = true")
    page.click("#tag-table tr[data-tag='tail'] a.tag-filter")
    listed = page.locator("#query-list li.query")
    expect(listed).to_have_count(1)
    expect(listed.first).to_have_attribute("data-query-id", str(live_app.query_ids["the matrix"]))
    expect(page.locator("#list-tag")).to_have_text("tail")
    page.click("#tag-table tr[data-tag='head'] a.tag-filter")
    expect(listed).to_have_count(2)
    assert page.evaluate("window.__sameDocument") is True  # filtered in place, no reload
    page.click("#clear-tag")
    expect(listed).to_have_count(3)
    context.close()
