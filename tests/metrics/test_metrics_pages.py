"""Pages of many metrics: the compare page's metric table (Holm) and the case page panel."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run
from app.web_common.templating import fmt_delta
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


def _metric_runs(
    api: ApiUser, factory: sessionmaker[Session], alien_errs: bool = False
) -> dict[str, Any]:
    """Two stored runs of a case with NDCG@10, P@10 and ERR@10, re-scored with ratings
    (with ``alien_errs``, the newer run's "alien" errored)."""
    ndcg, p10, err = (scorer_id(api, n) for n in ("NDCG@10", "P@10", "ERR@10"))
    case_id = movies_case(api, scorer_id=ndcg, metric_scorer_ids=[p10, err])
    ids = add_queries(api, case_id, ["star wars\thead\t3", "batman\thead,brand", "alien\ttail"])
    older = {
        ids["star wars"]: {"docs": [doc("1", "A New Hope", 1), doc("2", "Empire", 2)]},
        ids["batman"]: {"docs": [doc("4", "Batman Forever", 1)]},
        ids["alien"]: {"docs": [doc("6", "Alien", 1), doc("3", "Aliens", 2)]},
    }
    newer: dict[int, dict[str, Any]] = {
        ids["star wars"]: {"docs": [doc("2", "Empire", 1), doc("1", "A New Hope", 2)]},
        ids["batman"]: {"docs": [doc("5", "Batman", 1), doc("4", "Batman Forever", 2)]},
        ids["alien"]: {"docs": [doc("3", "Aliens", 1), doc("6", "Alien", 2)]},
    }
    if alien_errs:
        newer[ids["alien"]] = {"status": "error", "error": "timed out", "num_found": None}
    runs = [finished_run(factory, case_id, o, scorer=ndcg) for o in (older, newer)]
    with session_scope(factory) as session:
        for run_id in runs:
            run = session.get(Run, run_id)
            assert run is not None
            run.metric_scorer_ids = [p10, err]
        session.commit()
    ratings = {
        ids["star wars"]: {"1": 3, "2": 1},
        ids["batman"]: {"5": 3, "4": 1},
        ids["alien"]: {"6": 2, "3": 0},
    }
    for query_id, query_ratings in ratings.items():
        body = {"ratings": [{"doc_id": k, "rating": v} for k, v in query_ratings.items()]}
        put = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
        assert put.status_code == 200, put.text
    for run_id in runs:
        assert api.post(f"/api/v1/cases/{case_id}/runs/{run_id}/rescore").status_code == 200
    return {"case_id": case_id, "ids": ids, "base": runs[0], "other": runs[1], "p10": p10}


def test_the_compare_page_lists_every_metric_with_holm(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    params = {"base": setup["base"], "other": setup["other"]}
    twin = api.get(f"/api/v1/cases/{setup['case_id']}/runs/compare", params=params).json()
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}/compare", params=params))
    section = one(page, "#compare-metrics")
    assert "Holm" in one(section, "#holm-note").get_text()
    rows = section.select("tr.metric-row")
    assert [one(r, "th").get_text() for r in rows] == ["NDCG@10", "P@10", "ERR@10"]
    for row, metric in zip(rows, twin["metrics"], strict=True):
        assert one(row, ".metric-delta").get_text() == fmt_delta(metric["delta"])
        assert "," not in one(row, ".metric-tags").get_text()  # pills, not a comma list
        assert one(row, ".metric-p-holm").get_text() == f"{metric['p_holm']:.4f}"
        tags = [t["data-tag"] for t in row.select(".metric-tags .tag")]
        assert tags == ["brand", "head", "tail"]


def test_the_metric_table_says_it_averages_only_the_paired_queries(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory, alien_errs=True)
    params = {"base": setup["base"], "other": setup["other"]}
    twin = api.get(f"/api/v1/cases/{setup['case_id']}/runs/compare", params=params).json()
    ndcg = twin["metrics"][0]
    # The base's case score averages its 3 queries; the table's Base only the 2 paired ones.
    assert ndcg["n"] == 2 and twin["base"]["scored"] == 3
    assert f"{ndcg['base']:.1f}" != f"{twin['base']['case_score']:.1f}"
    login(client)
    page = soup(client.get(f"/cases/{setup['case_id']}/compare", params=params))
    section = one(page, "#compare-metrics")
    heads = [th.get_text(strip=True) for th in section.select("thead th")]
    assert heads[1:4] == ["Paired", "Base · mean over paired", "Other · mean over paired"]
    note = one(section, "#paired-note").get_text(" ", strip=True)
    assert "over only the queries it scored in both runs" in note
    rows = section.select("tr.metric-row")
    assert [one(r, ".metric-paired").get_text() for r in rows] == ["2", "2", "2"]
    assert one(rows[0], ".metric-base").get_text() == f"{ndcg['base']:.1f}"


def test_the_case_page_shows_the_metric_panel_and_the_tag_table(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    case_id, ids = setup["case_id"], setup["ids"]
    # What the previous run recorded when it finished: NDCG@10 40, P@10 10, no ERR@10.
    recorded = [
        {
            "scorer_id": scorer_id(api, "NDCG@10"),
            "name": "NDCG@10",
            "case_score": 40.0,
            "scored": 3,
        },
        {"scorer_id": setup["p10"], "name": "P@10", "case_score": 10.0, "scored": 3},
    ]
    with session_scope(session_factory) as session:
        base_run = session.get(Run, setup["base"])
        assert base_run is not None
        base_run.recorded_metrics = recorded
        session.commit()
    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    other = api.get(f"/api/v1/cases/{case_id}/runs/{setup['other']}").json()
    # Re-scored with today's ratings (as compare scores it), not as recorded (issue 35).
    base = api.get(f"/api/v1/cases/{case_id}/runs/{setup['base']}").json()
    assert twin["metrics"]["run_id"] == setup["other"]
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    panel = one(page, "#metric-panel")
    assert "plain means" in one(panel, "#aggregate-note").get_text()
    tiles = panel.select(".metric-tile")
    assert [one(t, ".metric-name").get_text() for t in tiles] == ["NDCG@10", "P@10", "ERR@10"]
    befores = [m["case_score"] for m in base["metrics"]]
    assert befores[:2] != [40.0, 10.0]
    for tile, now, before in zip(tiles, other["metrics"], befores, strict=True):
        assert one(tile, ".badge")["data-score"] == str(now["case_score"])
        change = f"{now['case_score'] - before:+.1f}"
        assert one(tile, ".metric-change").get_text() == change
        assert one(tile, ".metric-change")["data-previous-run-id"] == str(setup["base"])
        assert len(tile.select(".metric-spark svg")) == 1
    rows = {r["data-tag"]: r for r in panel.select("#tag-table tbody tr")}
    assert list(rows) == ["brand", "head", "tail"]
    ndcg_head = next(t for t in other["metrics"][0]["by_tag"] if t["tag"] == "head")
    cell = rows["head"].select("td")[0]
    assert cell["data-count"] == "2" == str(ndcg_head["count"])
    assert one(cell, ".tag-mean").get_text() == f"{ndcg_head['mean']:.1f}"

    # The tag's link lists only its queries (the partial, and the page as a fallback).
    link = one(rows["tail"], "a.tag-filter")
    partial = soup(client.get(str(link["hx-get"])))
    assert [li["data-query-id"] for li in partial.select("li.query")] == [str(ids["alien"])]
    full = soup(client.get(str(link["href"]).split("#")[0]))
    assert [li["data-query-id"] for li in full.select("#query-list li.query")] == [
        str(ids["alien"])
    ]
    assert one(full, "#list-tag").get_text() == "tail"


def test_queries_sort_by_any_metric(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    case_id, p10 = setup["case_id"], setup["p10"]
    run = api.get(f"/api/v1/cases/{case_id}/runs/{setup['other']}").json()
    by_p10 = sorted(run["queries"], key=lambda q: (-q["metric_scores"][str(p10)], q["query_id"]))
    listed = api.get(
        f"/api/v1/pages/cases/{case_id}/query-list",
        params={"sort": "score_desc", "metric": p10},
    ).json()
    assert listed["metric"] == p10
    assert [q["id"] for q in listed["items"]] == [q["query_id"] for q in by_p10]
    assert listed["items"][0]["metric_scores"][str(p10)] == by_p10[0]["metric_scores"][str(p10)]
    login(client)
    page = soup(client.get(f"/cases/{case_id}", params={"sort": "score_desc", "metric": p10}))
    assert one(page, "#sort-metric option[selected]")["value"] == str(p10)
    shown = [int(str(li["data-query-id"])) for li in page.select("#query-list li.query")]
    assert shown == [q["query_id"] for q in by_p10]


def test_metrics_and_tags_are_set_from_the_case_page(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    ndcg, p10, err = (scorer_id(api, n) for n in ("NDCG@10", "P@10", "ERR@10"))
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["star wars", "batman", "alien"])
    token = login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    form = one(page, "#metrics-settings")
    boxes = {attr(b, "value") for b in form.select("input[name=metric_scorer_ids]")}
    assert {str(p10), str(err)} <= boxes and str(ndcg) not in boxes
    saved = client.post(
        f"/cases/{case_id}/metrics",
        data={
            "csrf_token": token,
            "metric_scorer_ids": [str(err), str(p10)],
            "aggregate": "weighted_mean",
        },
        follow_redirects=False,
    )
    assert saved.status_code == 303
    case = api.get(f"/api/v1/cases/{case_id}").json()
    assert (case["metric_scorer_ids"], case["aggregate"]) == ([err, p10], "weighted_mean")
    page = soup(client.get(f"/cases/{case_id}"))
    checked = [attr(b, "value") for b in page.select("#metrics-settings input[checked]")]
    assert sorted(checked) == sorted([str(err), str(p10), "weighted_mean"])
    refused = client.post(
        f"/cases/{case_id}/metrics",
        data={"csrf_token": token, "metric_scorer_ids": ["x"], "aggregate": "median"},
    )
    assert refused.status_code == 422

    tagged = client.post(
        f"/cases/{case_id}/queries/tags",
        data={
            "csrf_token": token,
            "query_ids": [str(ids["star wars"]), str(ids["alien"])],
            "add_tags": "head, scifi",
            "weight": "2.5",
        },
        follow_redirects=False,
    )
    assert tagged.status_code == 303
    listed = {
        q["text"]: (q["tags"], q["weight"])
        for q in api.get(f"/api/v1/cases/{case_id}/queries").json()
    }
    assert listed == {
        "star wars": (["head", "scifi"], 2.5),
        "batman": ([], 1.0),
        "alien": (["head", "scifi"], 2.5),
    }
    client.post(
        f"/cases/{case_id}/queries/tags",
        data={"csrf_token": token, "query_ids": [str(ids["alien"])], "remove_tags": "head"},
    )
    assert api.get(f"/api/v1/cases/{case_id}/queries").json()[2]["tags"] == ["scifi"]
    page = soup(client.get(f"/cases/{case_id}"))
    alien = one(page, f"#query-{ids['alien']}")
    assert [t.get_text() for t in alien.select(".query-tag")] == ["scifi"]
    assert one(alien, "input.query-pick")["form"] == "bulk-tags-form"
    for bad in ({"weight": "-1"}, {"weight": "abc"}, {"add_tags": "t" * 41}, {}):
        answer = client.post(
            f"/cases/{case_id}/queries/tags",
            data={"csrf_token": token, "query_ids": [str(ids["alien"])] if bad else [], **bad},
        )
        assert answer.status_code == 422, bad
        assert one(soup(answer), "#bulk-tags-form .field-error[data-field=tags]").get_text()
    # Nothing ticked: the case page again, the message under the bar, the typed tags kept.
    unticked = client.post(
        f"/cases/{case_id}/queries/tags",
        data={"csrf_token": token, "add_tags": "brand, tail", "weight": "3"},
    )
    assert unticked.status_code == 422
    again = soup(unticked)
    bar = one(again, "#bulk-tags-form")
    assert one(bar, ".field-error").get_text() == "Tick at least one query in the list below first."
    assert one(bar, "input[name=add_tags]")["value"] == "brand, tail"
    assert one(bar, "input[name=weight]")["value"] == "3"
    assert again.select("header.topbar nav a") and again.select(f"#query-{ids['alien']}")
    assert api.get(f"/api/v1/cases/{case_id}/queries").json()[2]["tags"] == ["scifi"]
    other = client.post(
        f"/cases/{case_id}/queries/tags",
        data={"csrf_token": token, "query_ids": ["999999"], "weight": "2"},
    )
    assert other.status_code == 404


def test_a_javascript_metric_reads_doc_fields_in_a_comparison(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    code = "setScore(docs.length && docs[0].fields.title == 'Empire' ? 1 : 0)"
    created = api.post(
        "/api/v1/scorers",
        json={
            "name": "Empire first",
            "kind": "javascript",
            "code": code,
            "scale": [0, 1, 2, 3],
            "max_score": 1,
        },
    )
    assert created.status_code == 201, created.text
    js = created.json()["id"]
    api.patch(f"/api/v1/cases/{setup['case_id']}", json={"metric_scorer_ids": [setup["p10"], js]})
    params = {"base": setup["base"], "other": setup["other"]}
    body = api.get(f"/api/v1/cases/{setup['case_id']}/runs/compare", params=params).json()
    metric = next(m for m in body["metrics"] if m["scorer_id"] == js)
    # Only star wars has Empire first, and only in the other run: +100 over 3 queries.
    assert (metric["base"], metric["other"]) == (0.0, pytest.approx(100 / 3))
    assert metric["delta"] == pytest.approx(100 / 3)


def test_the_history_charts_any_metric_as_recorded(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    case_id, p10 = setup["case_id"], setup["p10"]
    ndcg = scorer_id(api, "NDCG@10")
    with session_scope(session_factory) as session:
        for run_id, value in ((setup["base"], 10.0), (setup["other"], 20.0)):
            run = session.get(Run, run_id)
            assert run is not None
            run.recorded_metrics = [
                {"scorer_id": ndcg, "name": "NDCG@10", "case_score": 50.0, "scored": 3},
                {"scorer_id": p10, "name": "P@10", "case_score": value, "scored": 3},
            ]
        session.commit()
    path = f"/api/v1/pages/cases/{case_id}/history"
    p10_history = api.get(path, params={"metric": p10}).json()
    assert p10_history["metric"] == p10
    assert [p["score"] for p in p10_history["points"]] == [10.0, 20.0]
    err = scorer_id(api, "ERR@10")
    assert [p["score"] for p in api.get(path, params={"metric": err}).json()["points"]] == [
        None,
        None,
    ]  # nothing recorded for ERR@10
    assert api.get(path).json()["metric"] is None
    login(client)
    fragment = soup(
        client.get(
            f"/cases/{case_id}/history", params={"metric": p10}, headers={"HX-Request": "true"}
        )
    )
    links = fragment.select("#history-metrics a")
    assert [a.get_text() for a in links] == ["NDCG@10", "P@10", "ERR@10"]
    assert one(fragment, "#history-metrics a.current")["data-scorer-id"] == str(p10)
    assert str(one(fragment, "#history")["hx-get"]).endswith(f"metric={p10}")


def test_a_querys_history_shows_any_metric_as_stored(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _metric_runs(api, session_factory)
    case_id, p10 = setup["case_id"], setup["p10"]
    query_id = setup["ids"]["star wars"]
    stored: dict[int, dict[str, Any]] = {}
    for run_id in (setup["base"], setup["other"]):
        detail = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
        row = next(q for q in detail["queries"] if q["query_id"] == query_id)
        stored[run_id] = {"primary": row["score"], "p10": row["metric_scores"][str(p10)]}
    url = f"/api/v1/cases/{case_id}/queries/{query_id}/history"
    primary = api.get(url).json()
    by_p10 = api.get(url, params={"metric": p10}).json()
    assert primary["metric"] is None and by_p10["metric"] == p10
    assert list(by_p10["metric_names"].values()) == ["NDCG@10", "P@10", "ERR@10"]
    assert [p["score"] for p in primary["points"]] == [
        stored[r]["primary"] for r in (setup["base"], setup["other"])
    ]
    assert [p["score"] for p in by_p10["points"]] == [
        stored[r]["p10"] for r in (setup["base"], setup["other"])
    ]
    assert by_p10["points"] != primary["points"]  # P@10 is not NDCG@10 here
    # An unknown metric is the primary again, not an error.
    assert api.get(url, params={"metric": 999999}).json()["points"] == primary["points"]
    login(client)
    page = soup(client.get(f"/cases/{case_id}/queries/{query_id}/history", params={"metric": p10}))
    assert one(page, "h1").get_text() == "star wars: P@10 over runs"
    current = one(page, "#query-history-metrics a[aria-current=true]")
    assert attr(current, "data-scorer-id") == str(p10)
