"""Scores over fewer than all queries are marked partial and never ranked as complete;
charts leave gaps where a score is missing. Sweeps and runs are stored directly (no engine)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run, Sweep
from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    attr,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)

KNOB_TEMPLATE = '{"query": {"match": {"title": {"query": "#$query##", "boost": ##t##}}}}'

# One combination per t: (status, case score, scored, unscored, errors); 25 queries each.
Combo = tuple[str, float | None, int, int, int]


def _stored_sweep(
    factory: sessionmaker[Session], case_id: int, combos: dict[float, Combo], status: str
) -> tuple[int, dict[float, int]]:
    """Store a one-knob sweep of t with a run per combination; return its id and run ids."""
    now = datetime.now(UTC)
    with session_scope(factory) as session:
        sweep = Sweep(
            case_id=case_id,
            try_number=1,
            status=status,
            grid={"t": list(combos)},
            base_knobs={"t": 1},
            total=len(combos),
        )
        session.add(sweep)
        session.flush()
        runs = {}
        for t, (run_status, score, scored, unscored, errors) in combos.items():
            ended = run_status == "finished"
            run = Run(
                case_id=case_id,
                try_number=1,
                status=run_status,
                case_score=score,
                recorded_score=score,
                total=25,
                done=scored + unscored + errors,
                scored=scored,
                unscored=unscored,
                errors=errors,
                knobs={"t": t},
                sweep_id=sweep.id,
                started_at=now,
                finished_at=now if ended else None,
            )
            session.add(run)
            session.flush()
            runs[t] = run.id
        session.commit()
        return sweep.id, runs


def test_a_sweep_page_with_a_no_score_combination_draws_a_gap(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api, query_template=KNOB_TEMPLATE, knobs={"t": 1})
    combos: dict[float, Combo] = {
        1: ("finished", 40.0, 25, 0, 0),
        2: ("finished", None, 0, 25, 0),  # nothing rated in reach: no score at all
        3: ("finished", 60.0, 25, 0, 0),
        4: ("finished", 80.0, 25, 0, 0),
        5: ("running", None, 0, 0, 0),  # still under way
    }
    sweep_id, runs = _stored_sweep(session_factory, case_id, combos, "running")
    answer = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}")
    assert answer.status_code == 200
    data = answer.json()
    assert [r["case_score"] for r in data["results"]] == [40.0, None, 60.0, 80.0, None]

    login(client)
    response = client.get(f"/cases/{case_id}/sweeps/{sweep_id}")  # was a 500: min(100, None)
    assert response.status_code == 200, response.text
    chart = one(soup(response), "#sweep-chart")
    # 640 x 160, plot x 34-628 (steps of 148.5), y = 136 - 1.26 x score. t=2 and t=5 are
    # gaps marked on the baseline, so t=1 stands alone and only t=3 - t=4 is a line.
    assert [attr(p, "points") for p in chart.select("polyline")] == ["331.0,60.4 479.5,35.2"]
    dots = [(attr(c, "cx"), attr(c, "cy")) for c in chart.select("circle.dot")]
    assert dots == [("34.0", "85.6"), ("331.0", "60.4"), ("479.5", "35.2")]
    assert [t.get_text() for t in chart.select("text.x-tick")] == ["1", "2", "3", "4", "5"]
    missing = chart.select("path.dot-missing")
    assert [attr(m, "data-run-id") for m in missing] == [str(runs[2]), str(runs[5])]
    assert one(missing[0], "title").get_text() == f"t=2 (run {runs[2]}): no score"
    fragment = client.get(f"/cases/{case_id}/sweeps/{sweep_id}", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert len(soup(fragment).select("#sweep-chart circle.dot")) == 3
    assert [r["complete"] for r in data["results"]] == [True, False, True, True, False]
    assert data["best"]["run_id"] == runs[4]


def test_a_sweep_where_nothing_scored_says_so(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api, query_template=KNOB_TEMPLATE, knobs={"t": 1})
    combos: dict[float, Combo] = {1: ("finished", None, 0, 25, 0), 2: ("finished", None, 0, 25, 0)}
    sweep_id, _runs = _stored_sweep(session_factory, case_id, combos, "finished")
    data = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}").json()
    assert data["best"] is None
    assert "no combination scored any query" in data["best_note"]
    login(client)
    response = client.get(f"/cases/{case_id}/sweeps/{sweep_id}")
    assert response.status_code == 200
    page = soup(response)
    assert page.select("#sweep-chart polyline, #sweep-chart circle") == []
    assert len(page.select("#sweep-chart path.dot-missing")) == 2  # marked, not dropped
    assert one(page, "#sweep-no-best").get_text(strip=True) == data["best_note"]


def test_a_partial_combination_is_never_the_best_and_asks_before_it_is_applied(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api, query_template=KNOB_TEMPLATE, knobs={"t": 1})
    combos: dict[float, Combo] = {
        1: ("finished", 70.0, 25, 0, 0),
        2: ("finished", 86.0, 21, 0, 4),  # 4 engine errors: the mean of the easy 21
        3: ("finished", 60.0, 25, 0, 0),
    }
    sweep_id, runs = _stored_sweep(session_factory, case_id, combos, "finished")
    data = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}").json()
    assert data["best"]["run_id"] == runs[1] and data["best"]["case_score"] == 70.0
    partial = data["results"][1]
    assert (partial["complete"], partial["scored"], partial["errors"], partial["total"]) == (
        False,
        21,
        4,
        25,
    )

    token = login(client)
    page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep_id}"))
    assert one(page, "#sweep-best")["data-run-id"] == str(runs[1])
    assert page.select_one("#sweep-no-best") is None
    row = one(page, f"#sweep-table tr[data-run-id='{runs[2]}']")
    badge = one(row, ".case-score .badge")
    assert "score-partial" in badge["class"] and "style" not in badge.attrs  # amber, not hue
    assert "21 of 25 queries: 4 errors" in attr(badge, "title")
    assert one(row, ".case-score").get_text(" ", strip=True) == "86 · 21 of 25 queries"
    assert one(row, "td.errors").get_text(strip=True) == "4"
    assert "apply-partial" in one(row, "button.apply")["class"]
    complete_row = one(page, f"#sweep-table tr[data-run-id='{runs[3]}']")
    assert "score-partial" not in one(complete_row, ".badge")["class"]
    assert one(complete_row, "td.errors").get_text(strip=True) == "0"

    # Applying it asks first, over the API and in the page.
    path = f"/api/v1/cases/{case_id}/sweeps/{sweep_id}/apply"
    refused = api.post(path, json={"run_id": runs[2]})
    assert refused.status_code == 409
    assert "21 of 25" in refused.json()["detail"]
    assert api.get(f"/api/v1/cases/{case_id}").json()["knobs"] == {"t": 1}
    apply_url = f"/cases/{case_id}/sweeps/{sweep_id}/apply"
    asked = client.post(
        apply_url, data={"csrf_token": token, "run_id": str(runs[2])}, follow_redirects=False
    )
    assert asked.status_code == 200
    confirm = one(soup(asked), "#confirm-partial-form")
    said = " ".join(one(soup(asked), "#confirm-partial").get_text(" ").split())
    assert "the mean over 21 of its 25 queries: 4 errored and 0 were not run." in said
    assert one(confirm, "input[name=confirm_partial]")["value"] == "true"
    assert api.get(f"/api/v1/cases/{case_id}").json()["knobs"] == {"t": 1}
    applied = client.post(
        apply_url,
        data={"csrf_token": token, "run_id": str(runs[2]), "confirm_partial": "true"},
        follow_redirects=False,
    )
    assert applied.status_code == 303
    assert api.get(f"/api/v1/cases/{case_id}").json()["knobs"] == {"t": 2}
    # A complete run applies at once, with no confirmation.
    direct = api.post(path, json={"run_id": runs[3]})
    assert direct.status_code == 200 and direct.json()["knobs"] == {"t": 3}
    forced = api.post(path, json={"run_id": runs[2], "confirm_partial": True})
    assert forced.status_code == 200 and forced.json()["knobs"] == {"t": 2}


def test_no_complete_run_means_no_best_and_says_why(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api, query_template=KNOB_TEMPLATE, knobs={"t": 1})
    combos: dict[float, Combo] = {
        1: ("finished", 83.0, 21, 0, 4),
        2: ("finished", 86.0, 22, 0, 3),
    }
    sweep_id, _runs = _stored_sweep(session_factory, case_id, combos, "finished")
    data = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}").json()
    assert data["best"] is None
    assert data["best_note"] == "No complete run: every combination had errors (engine or scorer)."
    login(client)
    page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep_id}"))
    assert page.select_one("#sweep-best") is None
    assert one(page, "#sweep-no-best").get_text(strip=True) == data["best_note"]
    assert page.select("#sweep-table tr.sweep-best") == []


def _rated_runs(
    api: ApiUser, factory: sessionmaker[Session]
) -> tuple[int, dict[str, int], int, int]:
    """A case of 4 rated queries, a complete run (74) and a later partial one (one error)."""
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman", "alien", "rocky"])
    for qid in ids.values():
        body = {"ratings": [{"doc_id": "1", "rating": 10}]}
        path = f"/api/v1/cases/{case_id}/queries/{qid}/ratings"
        assert api.put(path, json=body).status_code == 200
    classic = scorer_id(api, "Classic")
    scored = {"score": 100.0, "docs": [doc("1", "One", 1)]}
    complete = finished_run(
        factory, case_id, {qid: scored for qid in ids.values()}, scorer=classic, case_score=74.0
    )
    outcomes: dict[int, dict[str, Any]] = {qid: scored for qid in ids.values()}
    outcomes[ids["rocky"]] = {"status": "error", "error": "HTTP 500", "num_found": None}
    partial = finished_run(factory, case_id, outcomes, scorer=classic, case_score=86.0)
    return case_id, ids, complete, partial


def test_partial_scores_are_marked_on_the_case_page_cases_list_and_compare(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id, _ids, complete, partial = _rated_runs(api, session_factory)
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    badge = one(page, "#case-score-value")
    assert badge.get_text(strip=True) == "86" and "score-partial" in badge["class"]
    assert "3 of 4 queries: 1 error" in attr(badge, "title")
    assert one(page, "#case-score .score-coverage").get_text(strip=True) == "· 3 of 4 queries"
    cell = one(page, f"#runs tr[data-run-id='{partial}'] td.run-score")
    assert "score-partial" in cell["class"]
    assert cell.get_text(" ", strip=True) == "86 · 3 of 4 queries"
    whole = one(page, f"#runs tr[data-run-id='{complete}'] td.run-score")
    assert "score-partial" not in whole["class"] and whole.get_text(strip=True) == "74"
    assert api.get(f"/api/v1/pages/cases/{case_id}").json()["score"]["total"] == 4

    row = one(soup(client.get("/")), f"tr.case-row[data-case-id='{case_id}']")
    assert "score-partial" in one(row, ".badge")["class"]
    assert one(row, ".case-score").get_text(" ", strip=True) == "86 · 3 of 4 queries"
    listed = next(
        c for c in client.get("/api/v1/pages/cases").json()["cases"] if c["id"] == case_id
    )
    assert (listed["last_scored"], listed["last_errors"], listed["last_total"]) == (3, 1, 4)
    assert listed["aggregate"] == "mean"
    assert ": the mean over 3 of 4 queries: 1 error" in attr(one(row, ".badge"), "title")

    compared = soup(client.get(f"/cases/{case_id}/compare?base={partial}&other={complete}"))
    base = one(compared, "#base-case-score")
    assert "score-partial" in base["class"]
    assert one(compared, "#compare-base .score-coverage").get_text(strip=True) == (
        "· 3 of 4 queries"
    )
    assert "score-partial" not in one(compared, "#other-case-score")["class"]
    assert compared.select("#compare-other .score-coverage") == []
    # A weighted case's tooltip names its aggregate, not "the mean".
    assert api.patch(f"/api/v1/cases/{case_id}", json={"aggregate": "weighted_mean"}).is_success
    row = one(soup(client.get("/")), f"tr.case-row[data-case-id='{case_id}']")
    title = attr(one(row, ".badge"), "title")
    assert ": the weighted mean over 3 of 4 queries: 1 error" in title
    assert "the mean" not in title


def test_history_chart_and_sparklines_leave_gaps_for_runs_without_a_score(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars"])
    qid = ids["star wars"]
    classic = scorer_id(api, "Classic")
    for score in (30.0, None, 50.0, 70.0):
        outcome = {"score": score} if score is not None else {"status": "unscored"}
        finished_run(session_factory, case_id, {qid: outcome}, scorer=classic, case_score=score)
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    chart = one(page, "#history svg.chart")
    # 640 x 180, plot x 34-628 (steps of 198), y = 156 - 1.46 x score; the second run is a
    # gap in the line, marked on the baseline (app/web_common/charts.py).
    assert [attr(p, "points") for p in chart.select("polyline")] == ["430.0,83.0 628.0,53.8"]
    assert [attr(c, "cx") for c in chart.select("circle.dot")] == ["34.0", "430.0", "628.0"]
    assert [attr(m, "data-kind") for m in chart.select("path.dot")] == ["missing"]
    history = api.get(f"/api/v1/pages/cases/{case_id}").json()["history"]["points"]
    assert [p["score"] for p in history] == [30.0, None, 50.0, 70.0]
    query_line = one(page, f"#query-{qid} .query-history svg")
    assert len(query_line.select("polyline")) == 1 and len(query_line.select("circle")) == 2
    assert attr(query_line, "aria-label").startswith("Score of ")
    assert attr(query_line, "aria-label").endswith(" over the last 4 runs")

    row = one(soup(client.get("/")), f"tr.case-row[data-case-id='{case_id}']")
    # 120 x 28, pad 2: x steps by 38.67, y = 26 - 0.24 x score.
    lines = [attr(p, "points") for p in row.select("svg.sparkline polyline")]
    assert lines == ["79.3,14.0 118.0,9.2"]
    assert [attr(c, "cx") for c in row.select("svg.sparkline circle")] == ["2.0", "118.0"]
