"""The case header in a real Chromium with many metrics: the title keeps its room, the badge
and the Run button stay on the first row, the metric panel spans the card below them, and
nothing overlaps or runs out of the card (issue 38).

The app runs under uvicorn in a background thread on its own temporary SQLite database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.models import Scorer
from tests.browser.live import ARTIFACTS, fresh_app, seed, serving

pytestmark = pytest.mark.browser

EMAIL, PASSWORD = "header@example.com", "correct horse battery"
NAME = "Movies, every metric we track for the catalogue search team"


@dataclass(frozen=True)
class HeaderApp:
    url: str
    case_id: int
    metrics: int


@pytest.fixture(scope="module")
def header_app(tmp_path_factory: pytest.TempPathFactory, movies_engine: Any) -> Iterator[HeaderApp]:
    app = fresh_app(tmp_path_factory, "header-app")
    with serving(app) as url:
        factory: sessionmaker[Session] = app.state.session_factory
        with factory() as session:
            presets = list(
                session.scalars(
                    select(Scorer.id).where(Scorer.owner_id.is_(None)).order_by(Scorer.id)
                )
            )
        primary, extra = presets[0], presets[1:13]
        case_id, _ids = seed(
            factory,
            movies_engine.index_url,
            email=EMAIL,
            name=NAME,
            texts=["star wars\thead", "batman\ttail", "alien\thead"],
            scorer_id=primary,
            metric_scorer_ids=extra,
        )
        yield HeaderApp(url, case_id, 1 + len(extra))


def _box(page: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] | None = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 0.5
        and b["x"] < a["x"] + a["width"] - 0.5
        and a["y"] < b["y"] + b["height"] - 0.5
        and b["y"] < a["y"] + a["height"] - 0.5
    )


@pytest.mark.parametrize("width", [1280, 1024, 700])
def test_the_case_header_holds_many_metrics(
    browser: Any, header_app: HeaderApp, width: int
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{header_app.url}/login")
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_url(f"{header_app.url}/")
        page.goto(f"{header_app.url}/cases/{header_app.case_id}")
        if page.locator("#metric-panel").count() == 0:
            page.click("#run-button")
            expect(page.locator("#run-progress")).to_have_attribute(
                "data-status", "finished", timeout=30_000
            )
            page.reload()
        tiles = page.locator("#metric-panel .metric-tile")
        expect(tiles).to_have_count(header_app.metrics)
        if os.environ.get("RELEVO_SCREENSHOTS"):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"case-header-{width}.png"))

        card = _box(page, ".case-head")
        title, score = _box(page, ".case-head .case-title"), _box(page, "#case-score")
        run, panel = _box(page, "#run-panel"), _box(page, "#metric-panel")
        h1 = _box(page, ".case-head h1")
        parts = {"title": title, "score": score, "run": run, "panel": panel}
        # Nothing overlaps, and everything stays inside the card.
        for name, box in parts.items():
            assert box["x"] >= card["x"] - 0.5, name
            assert box["x"] + box["width"] <= card["x"] + card["width"] + 0.5, name
            for other, second in parts.items():
                if name < other:
                    assert not _overlap(box, second), (name, other)
        # The card never scrolls sideways (the tag table may, inside the panel).
        widths = page.evaluate(
            "() => { const c = document.querySelector('.case-head');"
            " return [c.scrollWidth, c.clientWidth]; }"
        )
        assert widths[0] <= widths[1], widths
        # The metric panel lies below the title, the badge and the Run button.
        top_row_bottom = max(b["y"] + b["height"] for b in (title, score, run))
        assert panel["y"] >= top_row_bottom - 0.5
        if width >= 1024:
            # One row: the title has room (its long name on two lines, three at 1024 px),
            # the badge and the Run button beside it, not dropped to a row of their own.
            assert title["width"] >= 0.35 * card["width"]
            line = float(
                page.evaluate(
                    "parseFloat(getComputedStyle("
                    "document.querySelector('.case-head h1')).lineHeight)"
                )
            )
            assert h1["height"] <= (2 if width >= 1280 else 3) * line + 1
            for beside in (score, run):  # their middles within the title's height
                middle = beside["y"] + beside["height"] / 2
                assert title["y"] <= middle <= title["y"] + title["height"]
                assert beside["x"] > title["x"] + title["width"] - 0.5
            # The tiles wrap within the panel: several to a row, all of them visible.
            first, last = tiles.first.bounding_box(), tiles.last.bounding_box()
            assert first is not None and last is not None
            assert last["y"] > first["y"] or header_app.metrics <= 8
            per_row = sum(
                1
                for i in range(header_app.metrics)
                if tiles.nth(i).bounding_box()["y"] == first["y"]
            )
            assert per_row >= 4
    finally:
        context.close()
