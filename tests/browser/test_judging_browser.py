"""Three raters judge a populated book in a real Chromium with the keyboard only.

Chromium comes from Debian (/usr/bin/chromium); the app runs under uvicorn in a thread on
its own database, once SQLite and once PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.books import service as book_service
from app.books.schemas import BookCreate
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.models import Book, Judgement, User
from app.queries import service as query_service
from tests.browser.live import PASSWORD, serving
from tests.fixtures.database import _postgres_database
from tests.support.books import share_everything_of
from tests.support.pages import doc

pytestmark = pytest.mark.browser

RATERS = ["ann@example.com", "ben@example.com", "cat@example.com"]


@dataclass(frozen=True)
class JudgingApp:
    url: str
    book_id: int
    pairs: int
    factory: sessionmaker[Session]


def _seed(factory: sessionmaker[Session]) -> tuple[int, int]:
    from app.models import Run, RunQuery

    with session_scope(factory) as session:
        users = [
            user_service.create_user(session=session, email=e, password=PASSWORD) for e in RATERS
        ]
        owner = users[0]
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=owner,
            body=EndpointCreate(name="movies", engine="opensearch", url="http://127.0.0.1:9/m"),
        )
        case = case_service.create_case(
            session=session,
            user=owner,
            body=CaseCreate(name="Movies", search_endpoint_id=endpoint.id, query_template="{}"),
        )
        queries = query_service.add_queries(session=session, case=case, texts=["alien", "heat"])
        run = Run(case_id=case.id, try_number=1, status="finished", total=2, done=2)
        session.add(run)
        session.flush()
        for position, query in enumerate(queries):
            docs = [doc(f"{query.text}-{i}", f"{query.text.title()} {i}", i + 1) for i in range(2)]
            session.add(
                RunQuery(
                    run_id=run.id,
                    query_id=query.id,
                    text=query.text,
                    position=position,
                    status="scored",
                    docs=docs,
                    num_found=2,
                )
            )
        queries[0].information_need = "Ridley Scott's 1979 film"
        session.commit()
        book = book_service.create_book(
            session=session,
            user=owner,
            body=BookCreate(
                name="Films", scale=[0, 1, 2, 3], scale_labels={"0": "Bad", "3": "Perfect"}
            ),
        )
        created, _ = book_service.populate(
            session=session, user=owner, book=book, case_id=case.id, depth=2
        )
        return book.id, created


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def judging_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A fresh database of the judging app, once SQLite and once PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('judging-db')}/relevo.db"
    else:
        yield from _postgres_database()


@pytest.fixture(scope="module")
def judging_app(tmp_path_factory: pytest.TempPathFactory, judging_url: str) -> Iterator[JudgingApp]:
    """Serve a fresh app whose book the three raters can all see (a stand-in for a team)."""
    from app.config import Settings
    from app.main import create_app
    from tests.fixtures.outbound import SUITE_HOSTS

    data_dir = tmp_path_factory.mktemp("judging-app")
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=judging_url,
            secret_key="judging-test-secret",
        )
    )
    try:
        with serving(app) as url:
            factory: sessionmaker[Session] = app.state.session_factory
            book_id, pairs = _seed(factory)
            with session_scope(factory) as session:
                owner_id = session.scalar(select(Book.owner_id).where(Book.id == book_id))
            assert owner_id is not None
            with pytest.MonkeyPatch.context() as patch:
                share_everything_of(patch, owner_id)
                yield JudgingApp(url, book_id, pairs, factory)
    finally:
        app.state.engine.dispose()


def _login(page: Any, app: JudgingApp, email: str) -> None:
    page.goto(f"{app.url}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{app.url}/")


def _judgements(app: JudgingApp) -> dict[str, list[tuple[int, float | None, bool]]]:
    with session_scope(app.factory) as session:
        rows = session.execute(
            select(User.email, Judgement.pair_id, Judgement.rating, Judgement.unrateable)
            .join(User, User.id == Judgement.user_id)
            .where(Judgement.book_id == app.book_id)
            .order_by(Judgement.pair_id)
        )
        result: dict[str, list[tuple[int, float | None, bool]]] = {}
        for email, pair_id, rating, unrateable in rows:
            result.setdefault(email, []).append((pair_id, rating, unrateable))
        return result


def _press_and_wait(page: Any, key: str, judged: int) -> None:
    from playwright.sync_api import expect

    page.keyboard.press(key)
    expect(page.locator("#progress")).to_have_attribute("data-judged", str(judged))


def test_three_raters_judge_with_the_keyboard(browser: Any, judging_app: JudgingApp) -> None:
    from playwright.sync_api import expect

    app = judging_app
    assert app.pairs == 4
    keys = {RATERS[0]: "3210", RATERS[1]: "3u10", RATERS[2]: "2210"}
    for email in RATERS:
        context = browser.new_context()
        page = context.new_page()
        _login(page, app, email)
        page.goto(f"{app.url}/books/{app.book_id}/judge")
        expect(page.locator("#progress")).to_have_text("0 of 4 judged by you")
        if email == RATERS[0]:
            expect(page.locator("#pair-query")).to_have_text("alien")
            expect(page.locator("#information-need")).to_have_text("Ridley Scott's 1979 film")
            expect(page.locator("#doc-fields")).to_contain_text("Alien 0")
            expect(page.locator("#judge-form button[data-digit='3']")).to_contain_text("Perfect")
        for done, key in enumerate(keys[email], start=1):
            _press_and_wait(page, key, done)
        expect(page.locator("#progress")).to_have_text("4 of 4 judged by you")
        expect(page.locator("#all-done")).to_be_visible()
        context.close()
    judged = _judgements(app)
    assert [r for _, r, _ in judged[RATERS[0]]] == [3.0, 2.0, 1.0, 0.0]
    assert [(r, u) for _, r, u in judged[RATERS[1]]] == [
        (3.0, False),
        (None, True),
        (1.0, False),
        (0.0, False),
    ]
    assert [r for _, r, _ in judged[RATERS[2]]] == [2.0, 2.0, 1.0, 0.0]


def test_skip_and_back_with_the_keyboard(browser: Any, judging_app: JudgingApp) -> None:
    from playwright.sync_api import expect

    app = judging_app
    context = browser.new_context()
    page = context.new_page()
    _login(page, app, RATERS[0])
    page.goto(f"{app.url}/books/{app.book_id}/judge")
    # Everything is judged: back shows the last pair with its judgement, and 2 replaces it.
    page.keyboard.press("b")
    expect(page.locator("#judge-form button.selected")).to_contain_text("Bad")
    last = page.locator("#pair").get_attribute("data-pair-id")
    page.keyboard.press("b")
    expect(page.locator("#pair")).not_to_have_attribute("data-pair-id", last or "")
    page.keyboard.press("s")
    expect(page.locator("#all-done")).to_be_visible()
    page.keyboard.press("b")
    expect(page.locator("#pair")).to_have_attribute("data-pair-id", last or "")
    page.keyboard.press("2")
    expect(page.locator("#all-done")).to_be_visible()
    assert [r for _, r, _ in _judgements(app)[RATERS[0]]] == [3.0, 2.0, 1.0, 2.0]
    context.close()
