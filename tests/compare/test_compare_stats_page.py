"""The compare page's statistics and overlap, and the side-by-side page, agree with their JSON."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run
from app.scoring.overlap import rbo_ext
from tests.fixtures.users import ApiUser
from tests.support.compare_pages import XSS, _two_runs
from tests.support.pages import attr, login, one, soup


def test_compare_page_states_the_statistics_in_words(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    params = {"base": setup["base"], "other": setup["other"]}
    data = api.get(f"/api/v1/cases/{setup['case_id']}/runs/compare", params=params).json()
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}/compare", params=params))
    assert one(page, "#stats-summary").get_text(strip=True) == data["summary"]
    assert data["stats"]["n"] == 2
    assert "1 better, 1 worse" in data["summary"]
    assert one(page, "#small-sample").get_text(" ", strip=True).startswith("Only 2 queries")
    assert one(page, "#stats-wins").get_text(strip=True) == "1 / 1 / 0"
    rows = {int(attr(r, "data-query-id")): r for r in page.select("#compare-queries tbody tr")}
    for q in data["queries"]:
        cell = one(rows[q["query_id"]], "td.rbo")
        if q["overlap"] is None:
            assert cell.get_text(strip=True) == "\u2013"
        else:
            assert float(attr(cell, "data-value")) == q["overlap"]["rbo"]
    wars = setup["ids"]["star wars"]
    assert data["queries"][0]["overlap"] is not None
    by_id = {q["query_id"]: q for q in data["queries"]}
    assert by_id[wars]["overlap"]["rbo"] == rbo_ext(["1", "2"], ["2", "9"])
    changed = [int(attr(li, "data-query-id")) for li in page.select("#changed-most li")]
    assert changed == [c["query_id"] for c in data["overlap"]["changed_most"]]
    assert wars in changed


def test_side_by_side_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _two_runs(api, session_factory)
    with session_scope(session_factory) as session:  # the other run was one combination of a sweep
        other_run = session.get(Run, setup["other"])
        assert other_run is not None
        other_run.knobs = {"boost": 2.5}
        session.commit()
    login(client)
    batman = setup["ids"]["batman"]
    response = client.get(
        f"/cases/{setup['case_id']}/compare/queries/{batman}",
        params={"base": setup["base"], "other": setup["other"]},
    )
    assert response.status_code == 200
    page = soup(response)
    # Each side is named as on the compare page: run, try and the knobs it searched with.
    assert one(page, "#side-base h2").get_text(strip=True) == (
        f"Base · Run {setup['base']} · try 1 · titleBoost=10"  # the try's knobs
    )
    assert one(page, "#side-other h2").get_text(strip=True) == (
        f"Other · Run {setup['other']} · try 1 · boost=2.5"
    )
    base = [(li["data-doc-id"], li["data-mark"]) for li in page.select("#side-base li.side-doc")]
    other = [(li["data-doc-id"], li["data-mark"]) for li in page.select("#side-other li.side-doc")]
    assert base == [("4", "moved")]
    assert other == [("5", "new"), ("4", "moved")]
    assert XSS in one(page, "#side-other li[data-doc-id='5'] .doc-title").get_text()
    assert XSS not in response.text  # escaped
    alternate = attr(one(page, "link[rel=alternate]"), "href")
    data = api.get(alternate).json()
    assert data["other_docs"][0]["mark"] == "new"
    assert (data["base_try_number"], data["base_knobs"]) == (1, {"titleBoost": 10})
    assert (data["other_try_number"], data["other_knobs"]) == (1, {"boost": 2.5})
