"""The sweep form on the case page, the sweep page (table, heatmap, best) and apply."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.sweeps.web import grid_from_form
from tests.fixtures.users import ApiUser
from tests.support.pages import attr, login, one, soup
from tests.support.sweeps import rated_case as rated_case  # the fixture

pytestmark = pytest.mark.runner  # starts runs (and sweeps)


def _csrf(client: TestClient, url: str) -> str:
    return str(one(soup(client.get(url)), "#sweep-form input[name=csrf_token]")["value"])


def _wait(api: ApiUser, case_id: int, sweep_id: int) -> dict[str, Any]:
    for _ in range(400):
        sweep: dict[str, Any] = api.get(f"/api/v1/cases/{case_id}/sweeps/{sweep_id}").json()
        if sweep["status"] not in ("queued", "running"):
            return sweep
        time.sleep(0.05)
    raise AssertionError("the sweep did not end")


def test_grid_from_form() -> None:
    form = {"sweep.a": "1, 2,3", "sweep.b": "", "name": "x", "sweep.c": "4; x"}
    assert grid_from_form(form) == {"a": [1.0, 2.0, 3.0], "c": [4.0, "x"]}


def test_sweep_from_the_case_page_to_apply(
    api: ApiUser, client: TestClient, rated_case: dict[str, Any]
) -> None:
    case_id = rated_case["id"]
    login(client)
    case_url = f"/cases/{case_id}"
    inputs = [i["name"] for i in soup(client.get(case_url)).select("#sweep-form input.code")]
    assert sorted(inputs) == ["sweep.g", "sweep.t"]
    token = _csrf(client, case_url)
    response = client.post(
        f"/cases/{case_id}/sweeps",
        data={"csrf_token": token, "sweep.g": "0, 40", "sweep.t": "1,2,4"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    sweep_id = int(response.headers["location"].rstrip("/").rsplit("/", 1)[1])
    data = _wait(api, case_id, sweep_id)
    assert data["total"] == 6 and data["status"] == "finished"

    page = soup(client.get(f"/cases/{case_id}/sweeps/{sweep_id}"))
    rows = page.select("#sweep-table tbody tr")
    assert [int(attr(r, "data-run-id")) for r in rows] == [r["run_id"] for r in data["results"]]
    best_rows = [
        int(attr(r, "data-run-id")) for r in rows if "sweep-best" in (r.get("class") or [])
    ]
    assert best_rows == [data["best"]["run_id"]]
    cells = page.select("#sweep-heatmap tbody td.cell")
    assert len(cells) == 6
    # Rows are g (0, 40), columns t (1, 2, 4): the heatmap holds each combination's score.
    by_knobs = {(r["knobs"]["g"], r["knobs"]["t"]): r["case_score"] for r in data["results"]}
    expected = [by_knobs[(g, t)] for g in (0, 40) for t in (1, 2, 4)]
    assert [float(attr(c, "data-score")) for c in cells] == expected
    # Colours span the scores shown: the lowest complete run red (hue 0), the highest green.
    complete = [r["case_score"] for r in data["results"] if r["complete"]]
    low, high = min(complete), max(complete)
    assert low < high
    hues = {float(attr(c, "data-score")): int(attr(c, "data-hue")) for c in cells}
    assert (hues[low], hues[high]) == (0, 120)
    assert one(page, "#heatmap-legend .legend-low").get_text() == str(round(low))
    assert one(page, "#sweep-best")["data-run-id"] == str(data["best"]["run_id"])
    assert api.get(attr(one(page, "link[rel=alternate]"), "href")).json() == data
    partial = client.get(f"/cases/{case_id}/sweeps/{sweep_id}", headers={"HX-Request": "true"})
    assert partial.status_code == 200
    fragment = soup(partial)
    assert one(fragment, "#sweep-results")["data-status"] == "finished"
    assert not fragment.select("html, #sweep-results[hx-get]")  # no page, no more polling

    chosen = data["results"][-1]  # g = 40, t = 4: not the case's knobs
    applied = client.post(
        f"/cases/{case_id}/sweeps/{sweep_id}/apply",
        data={"csrf_token": token, "run_id": str(chosen["run_id"])},
        follow_redirects=False,
    )
    assert applied.status_code == 303
    case = api.get(f"/api/v1/cases/{case_id}").json()
    assert case["knobs"] == chosen["knobs"] == {"g": 40, "t": 4}
    assert case["try_number"] == rated_case["try_number"] + 1


def test_a_bad_sweep_form_is_refused(
    api: ApiUser, client: TestClient, rated_case: dict[str, Any]
) -> None:
    case_id = rated_case["id"]
    login(client)
    token = _csrf(client, f"/cases/{case_id}")
    response = client.post(
        f"/cases/{case_id}/sweeps", data={"csrf_token": token, "sweep.g": "1, lots"}
    )
    assert response.status_code == 422
    assert "Cannot start the sweep" in soup(response).get_text()
    assert api.get(f"/api/v1/cases/{case_id}/runs").json()[0]["sweep_id"] is None
