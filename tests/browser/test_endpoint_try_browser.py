"""The endpoint page's "Try it" panel in a real Chromium, on a search API endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.accounts import service as user_service
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from tests.browser.live import EMAIL, LiveApp
from tests.browser.live import login as _login
from tests.engines.fake_services import Service, running_service

pytestmark = pytest.mark.browser


MAPPER = """
docsMapper = function (data) {
  return data.map(function (p) { return {id: p.publication_id, title: p.title}; });
};
"""


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service() as running:
        yield running


def test_try_it_shows_the_raw_answer_and_the_mapped_docs(
    browser: Any, live_app: LiveApp, service: Service
) -> None:
    from playwright.sync_api import expect

    with session_scope(live_app.session_factory) as session:
        user = user_service.get_by_email(session=session, email=EMAIL)
        assert user is not None
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(
                name="publications",
                engine="searchapi",
                url=service.url + "/api",
                mapper_code=MAPPER,
            ),
        )
        session.commit()
        endpoint_id = endpoint.id
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        _login(page, live_app)
        page.goto(f"{live_app.url}/endpoints/{endpoint_id}")
        expect(page.locator("textarea[name=mapper_code]")).to_contain_text("docsMapper")
        page.evaluate("window.__sameDocument = true")
        page.fill("#try-form input[name=query_text]", "relevance")
        page.fill("#try-form textarea[name=template]", "q=#$query##")
        page.click("#try-button")
        result = page.locator("#try-result")
        expect(result).to_have_attribute("data-ok", "true")
        expect(result.locator(".doc-id")).to_have_text(["101", "102", "103"])
        expect(result.locator("#try-num-found")).to_have_text("3")
        assert page.evaluate("window.__sameDocument") is True  # htmx swapped the panel only
        page.locator("#try-result summary").click()
        expect(page.locator("#try-raw")).to_contain_text('"publication_id": 101')
        assert service.last["query"] == {"q": ["relevance"]}
    finally:
        context.close()
