"""The knob sweep form on the case page: a refused sweep comes back to the case page, each
problem under its knob's box, with what was typed and the page's navigation."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run, Sweep
from tests.fixtures.users import ApiUser
from tests.support.pages import attr, login, movies_case, one, soup

KNOB_TEMPLATE = (
    '{"query": {"multi_match": {"query": "#$query##", '
    '"fields": ["title^##titleBoost##", "overview^##overviewBoost##"]}}}'
)


def _sweep_errors(page: BeautifulSoup) -> dict[str, str]:
    """Return each message by the box it sits under (the box points at it)."""
    found: dict[str, str] = {}
    for cell in page.select("#sweep-form .field:has(p.field-error)"):
        box, message = one(cell, "input"), one(cell, "p.field-error")
        assert box.get("aria-describedby") == message.get("id")
        found[attr(box, "name")] = message.get_text(strip=True)
    return found


def _count(factory: sessionmaker[Session], model: type[Run] | type[Sweep]) -> int:
    with session_scope(factory) as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


@pytest.fixture
def knob_case(api: ApiUser) -> int:
    """Return the id of a case whose template has two knobs."""
    return movies_case(api, query_template=KNOB_TEMPLATE)


def test_a_bad_value_comes_back_under_its_knob_with_the_input_kept(
    client: TestClient, knob_case: int, session_factory: sessionmaker[Session]
) -> None:
    token = login(client)
    response = client.post(
        f"/cases/{knob_case}/sweeps",
        data={"csrf_token": token, "sweep.titleBoost": "1, lots", "sweep.overviewBoost": "2; 3"},
        follow_redirects=False,
    )
    assert response.status_code == 422
    page = soup(response)
    assert _sweep_errors(page) == {
        "sweep.titleBoost": "Knob titleBoost: 'lots' is not a number; write the values to try "
        "separated by commas, e.g. 1, 5, 10."
    }
    summary = one(page, "#sweep-errors")
    assert summary.p is not None
    assert summary.p.get_text() == "Cannot start the sweep: 1 problem to fix."
    assert "body." not in summary.get_text() and "knobs." not in summary.get_text()
    # What was typed is kept, in both boxes.
    assert one(page, "input[name='sweep.titleBoost']")["value"] == "1, lots"
    assert one(page, "input[name='sweep.overviewBoost']")["value"] == "2; 3"
    # The case page itself, with its navigation, brought back to the sweep form.
    assert one(page, "h1").get_text() == "Movies"
    assert [a.get_text() for a in page.select("nav.mainnav a")][:2] == ["Dashboard", "Cases"]
    assert attr(one(page, "#sweep-form"), "action").endswith(f"/cases/{knob_case}/sweeps#sweep")
    assert _count(session_factory, Sweep) == 0 and _count(session_factory, Run) == 0


def test_grid_problems_go_under_the_form(
    client: TestClient, knob_case: int, session_factory: sessionmaker[Session]
) -> None:
    token = login(client)
    url = f"/cases/{knob_case}/sweeps"
    too_many = {
        "csrf_token": token,
        "sweep.titleBoost": ", ".join(str(n) for n in range(1, 12)),
        "sweep.overviewBoost": ", ".join(str(n) for n in range(1, 11)),
    }
    blank = {"csrf_token": token, "sweep.titleBoost": " ", "sweep.overviewBoost": ""}
    for data, message in (
        (too_many, "The grid has 110 combinations; a sweep runs at most 100."),
        (blank, "Type the values to try for at least one knob, e.g. 1, 5, 10."),
    ):
        response = client.post(url, data=data, follow_redirects=False)
        assert response.status_code == 422
        page = soup(response)
        assert one(page, "#sweep-form #error-sweep").get_text() == message
        assert _sweep_errors(page) == {}
        kept = one(page, "input[name='sweep.titleBoost']")["value"]
        assert kept == data["sweep.titleBoost"]
    assert _count(session_factory, Sweep) == 0


def test_a_knob_the_template_lacks_is_named_in_the_summary(
    client: TestClient, knob_case: int
) -> None:
    token = login(client)
    response = client.post(
        f"/cases/{knob_case}/sweeps",
        data={"csrf_token": token, "sweep.titleBoost": "1, 2", "sweep.nope": "1"},
        follow_redirects=False,
    )
    assert response.status_code == 422
    items = soup(response).select("#sweep-errors li")
    assert [(attr(li, "data-field"), li.get_text()) for li in items] == [
        (
            "sweep.nope",
            "The query template has no knob 'nope' (its knobs: titleBoost, overviewBoost).",
        )
    ]
