"""Numbers to trust at a glance (#25): runs named by their knobs, a case rated on another
scale says so, charts with axes and marked runs, the history as a page of its own."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run, Try
from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)


def _set_knobs(factory: sessionmaker[Session], run_id: int, knobs: dict[str, float]) -> None:
    with session_scope(factory) as session:
        session.execute(update(Run).where(Run.id == run_id).values(knobs=knobs))
        session.commit()


def _swept_case(api: ApiUser, factory: sessionmaker[Session]) -> dict[str, Any]:
    """A case with three finished runs of try 1: the try's knobs (fuzziness 0), then a
    sweep's fuzziness 1 and fuzziness 2 (which errored on one of its two queries)."""
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["star wars", "batman"])
    wars, bat = ids["star wars"], ids["batman"]
    plain: dict[int, dict[str, Any]] = {
        wars: {"score": 40.0, "docs": [doc("1", "A", 1)]},
        bat: {"score": 60.0},
    }
    first = finished_run(factory, case_id, plain, scorer=ndcg, case_score=50.0)
    second = finished_run(factory, case_id, plain, scorer=ndcg, case_score=50.0)
    broken: dict[int, dict[str, Any]] = {
        wars: {"score": 80.0, "docs": [doc("1", "A", 1)]},
        bat: {"status": "error", "error": "HTTP 500"},
    }
    third = finished_run(factory, case_id, broken, scorer=ndcg, case_score=80.0)
    _set_knobs(factory, second, {"fuzziness": 1.0})
    _set_knobs(factory, third, {"fuzziness": 2.0, "boost": 0.5})
    with session_scope(factory) as session:  # the try's own knobs: what the first run searched with
        stmt = update(Try).where(Try.case_id == case_id, Try.number == 1)
        session.execute(stmt.values(knobs={"fuzziness": 0}))
        session.commit()
    return {"case_id": case_id, "ids": ids, "runs": [first, second, third]}


def test_runs_are_named_by_their_knobs_in_the_history_and_the_compare_form(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _swept_case(api, session_factory)
    first, second, third = setup["runs"]
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}"))
    headers = [th.get_text() for th in page.select("#runs thead th")]
    assert headers[:3] == ["Run", "Try", "Knobs"]
    knobs = {
        int(str(tr["data-run-id"])): one(tr, ".run-knobs").get_text(" ", strip=True)
        for tr in page.select("#runs tbody tr")
    }
    assert knobs == {first: "fuzziness=0", second: "fuzziness=1", third: "boost=0.5, fuzziness=2"}
    base_options = [o.get_text() for o in page.select("#compare-form select[name=base] option")]
    # Each entry says which score it is: the recorded scorer's, as it was at finish.
    assert base_options == [
        f"Run {third} · try 1 · boost=0.5, fuzziness=2 · NDCG@10 80 (mean) at finish",
        f"Run {second} · try 1 · fuzziness=1 · NDCG@10 50 (mean) at finish",
        f"Run {first} · try 1 · fuzziness=0 · NDCG@10 50 (mean) at finish",
    ]
    other_options = [o.get_text() for o in page.select("#compare-form select[name=other] option")]
    assert other_options[1:] == base_options

    compare = soup(
        client.get(f"/cases/{setup['case_id']}/compare", params={"base": second, "other": third})
    )
    # Each side says its metric and aggregate.
    assert one(compare, "#compare-base .side-label").get_text() == (
        f"Run {second} · try 1 · fuzziness=1, NDCG@10, mean"
    )
    assert one(compare, "#compare-other .side-label").get_text() == (
        f"Run {third} · try 1 · boost=0.5, fuzziness=2, NDCG@10, mean"
    )
    api.patch(f"/api/v1/cases/{setup['case_id']}", json={"aggregate": "weighted_mean"})
    weighted = soup(
        client.get(f"/cases/{setup['case_id']}/compare", params={"base": second, "other": third})
    )
    assert one(weighted, "#compare-base .side-basis").get_text() == ", NDCG@10, weighted mean"


def test_the_query_history_names_each_run_by_its_knobs(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _swept_case(api, session_factory)
    first, second, third = setup["runs"]
    wars = setup["ids"]["star wars"]
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}/queries/{wars}/history"))
    assert [th.get_text() for th in page.select("#query-history thead th")][:3] == [
        "Run",
        "Try",
        "Knobs",
    ]
    rows = page.select("#query-history tbody tr")
    assert [one(r, ".run-knobs").get_text() for r in rows] == [
        "fuzziness=0",
        "fuzziness=1",
        "boost=0.5, fuzziness=2",
    ]
    titles = [t.get_text() for t in page.select("#query-history-chart circle title")]
    assert titles == [
        f"Run {first} · try 1 · fuzziness=0: 40",
        f"Run {second} · try 1 · fuzziness=1: 40",
        f"Run {third} · try 1 · boost=0.5, fuzziness=2: 80",
    ]
    data = api.get(f"/api/v1/cases/{setup['case_id']}/queries/{wars}/history").json()
    assert [p["knobs"] for p in data["points"]] == [
        {"fuzziness": 0},
        {"fuzziness": 1.0},
        {"fuzziness": 2.0, "boost": 0.5},
    ]


def test_a_case_rated_on_another_scale_says_so_in_its_header(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["star wars", "batman"])
    graded = {
        ids["star wars"]: {"1": 3, "2": 2, "3": 0},
        ids["batman"]: {"4": 1, "5": 3},
    }
    for query_id, ratings in graded.items():
        body = {"ratings": [{"doc_id": d, "rating": r} for d, r in ratings.items()]}
        put = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
        assert put.status_code == 200, put.text
    login(client)
    # Under its own 0-3 scorer the case says nothing.
    assert soup(client.get(f"/cases/{case_id}")).select("#scale-mismatch") == []
    json_page = api.get(f"/api/v1/pages/cases/{case_id}").json()
    assert json_page["scale_mismatch"] is None

    binary = scorer_id(api, "P@10")
    patched = api.patch(f"/api/v1/cases/{case_id}", json={"scorer_id": binary})
    assert patched.status_code == 200, patched.text
    page = soup(client.get(f"/cases/{case_id}"))
    # 3, 2 and 3 are off the 0-1 scale; 0 and 1 are on it.
    warning = one(page, ".case-head #scale-mismatch").get_text(" ", strip=True)
    assert warning.startswith("3 of 5 ratings lie outside P@10's scale (0\u20131)")
    assert "the case is rated 0\u20133" in warning
    assert api.get(f"/api/v1/pages/cases/{case_id}").json()["scale_mismatch"] == {
        "off_scale": 3,
        "rated": 5,
        "ratings_low": 0.0,
        "ratings_high": 3.0,
        "scale_low": 0.0,
        "scale_high": 1.0,
    }


def test_the_history_chart_has_axes_and_marks_partial_and_failed_runs(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _swept_case(api, session_factory)
    first, second, third = setup["runs"]
    with session_scope(session_factory) as session:
        failed = Run(case_id=setup["case_id"], try_number=1, status="failed", total=2)
        session.add(failed)
        session.commit()
        failed_id = failed.id
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}"))
    chart = one(page, "#history #case-history-chart")
    assert [t.get_text() for t in chart.select("text.y-tick")] == ["0", "25", "50", "75", "100"]
    assert [t.get_text() for t in chart.select("text.x-tick")] == [
        str(r) for r in (first, second, third, failed_id)
    ]
    kinds = {int(str(d["data-run-id"])): d["data-kind"] for d in chart.select(".dot")}
    assert kinds == {first: "scored", second: "scored", third: "partial", failed_id: "missing"}
    assert one(chart, f"[data-run-id='{third}'] title").get_text() == (
        f"Run {third}: 80 over 1 of 2 queries"
    )
    assert one(chart, f"[data-run-id='{failed_id}'] title").get_text() == (
        f"Run {failed_id}: the run failed"
    )
    # Round dots: the chart keeps its aspect ratio (no preserveAspectRatio="none").
    assert chart.get("preserveAspectRatio") is None
    legend = one(page, "#history .chart-legend").get_text(" ", strip=True)
    assert "partial" in legend and "(1)" in legend and "no score (1)" in legend


def test_the_history_opened_directly_is_a_page_and_via_htmx_a_fragment(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _swept_case(api, session_factory)
    login(client)
    url = f"/cases/{setup['case_id']}/history"
    page = soup(client.get(url))
    assert page.select("html nav") and page.select("main #history #runs")
    assert one(page, "title").get_text().startswith("History · ")
    crumb = one(page, ".crumbs a")
    assert str(crumb["href"]).endswith(f"/cases/{setup['case_id']}")
    fragment = soup(client.get(url, headers={"HX-Request": "true"}))
    assert not fragment.select("html, nav") and one(fragment, "#history #runs")
