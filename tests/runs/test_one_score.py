"""One number everywhere: the badge, the metric panel and the API agree after any change of
weights, aggregate or metric set (the stored case score equals a re-score at once)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Run
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


def _rated_runs(api: ApiUser, factory: sessionmaker[Session]) -> dict[str, Any]:
    """Two stored runs of a case (NDCG@10 first, P@10 and ERR@10), re-scored with ratings;
    star wars weighs 3."""
    ndcg, p10, err = (scorer_id(api, n) for n in ("NDCG@10", "P@10", "ERR@10"))
    case_id = movies_case(api, scorer_id=ndcg, metric_scorer_ids=[p10, err])
    ids = add_queries(api, case_id, ["star wars\thead\t3", "batman\thead", "alien\ttail"])
    older = {
        ids["star wars"]: {"docs": [doc("1", "A New Hope", 1), doc("2", "Empire", 2)]},
        ids["batman"]: {"docs": [doc("4", "Batman Forever", 1)]},
        ids["alien"]: {"docs": [doc("6", "Alien", 1), doc("3", "Aliens", 2)]},
    }
    newer = {
        ids["star wars"]: {"docs": [doc("2", "Empire", 1), doc("1", "A New Hope", 2)]},
        ids["batman"]: {"docs": [doc("5", "Batman", 1), doc("4", "Batman Forever", 2)]},
        ids["alien"]: {"docs": [doc("6", "Alien", 1), doc("3", "Aliens", 2)]},
    }
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
    return {"case_id": case_id, "ids": ids, "runs": runs, "p10": p10, "err": err}


def _scores(api: ApiUser, case_id: int, run_id: int) -> tuple[float, float, float]:
    """Return (run.case_score, run.metrics[primary].case_score, the mean computed here
    from the run's query scores and the queries' current weights, by the case's aggregate)."""
    run = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
    case = api.get(f"/api/v1/cases/{case_id}").json()
    weights = {q["id"]: q["weight"] for q in api.get(f"/api/v1/cases/{case_id}/queries").json()}
    # A deleted query's row weighs 1.
    scored = [
        (q["score"], weights.get(q["query_id"], 1.0))
        for q in run["queries"]
        if q["score"] is not None
    ]
    if case["aggregate"] == "weighted_mean":
        mean = sum(s * w for s, w in scored) / sum(w for _, w in scored)
    else:
        mean = sum(s for s, _ in scored) / len(scored)
    assert run["metrics"][0]["scorer_id"] == run["scorer_id"]
    return run["case_score"], run["metrics"][0]["case_score"], mean


def _badge(client: TestClient, case_id: int) -> float:
    page = soup(client.get(f"/cases/{case_id}"))
    return float(str(one(page, "#case-score")["data-case-score"]))


def _agree(api: ApiUser, client: TestClient, setup: dict[str, Any]) -> float:
    """Check badge == panel == API for the latest run, stored == computed for every run;
    return the latest run's score."""
    case_id = setup["case_id"]
    for run_id in setup["runs"]:
        stored, panel, computed = _scores(api, case_id, run_id)
        assert stored == panel
        assert round(stored, 4) == round(computed, 4)
    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    latest = _scores(api, case_id, setup["runs"][-1])[0]
    assert twin["metrics"]["metrics"][0]["case_score"] == latest
    assert _badge(client, case_id) == latest
    return latest


def test_weights_and_aggregate_rescore_the_badge_at_once(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _rated_runs(api, session_factory)
    case_id, ids = setup["case_id"], setup["ids"]
    login(client)
    plain = _agree(api, client, setup)
    path = f"/api/v1/cases/{case_id}"
    assert api.patch(path, json={"aggregate": "weighted_mean"}).status_code == 200
    weighted = _agree(api, client, setup)
    assert weighted != plain
    # A weight set on one query, then on many, then by a bulk line: each re-totals at once.
    one_query = api.patch(f"{path}/queries/{ids['alien']}", json={"weight": 4})
    assert one_query.status_code == 200, one_query.text
    heavier_alien = _agree(api, client, setup)
    assert heavier_alien not in (plain, weighted)
    many = api.patch(f"{path}/queries", json={"query_ids": [ids["batman"]], "weight": 2})
    assert many.status_code == 200, many.text
    bulk = api.post(f"{path}/queries/bulk", json={"queries": ["star wars\thead\t1"]})
    assert bulk.status_code == 200, bulk.text
    assert _agree(api, client, setup) not in (plain, weighted, heavier_alien)
    # Deleting a query: its rows weigh 1 in the weighted mean from now on.
    assert api.delete(f"{path}/queries/{ids['alien']}").status_code == 204
    _agree(api, client, setup)
    assert api.patch(path, json={"aggregate": "mean"}).status_code == 200
    assert _agree(api, client, setup) == plain


def test_the_page_forms_rescore_the_badge_at_once(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _rated_runs(api, session_factory)
    case_id, ids = setup["case_id"], setup["ids"]
    token = login(client)
    plain = _agree(api, client, setup)
    metrics = [str(setup["p10"]), str(setup["err"])]
    saved = client.post(
        f"/cases/{case_id}/metrics",
        data={"csrf_token": token, "metric_scorer_ids": metrics, "aggregate": "weighted_mean"},
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    weighted = _agree(api, client, setup)
    assert weighted != plain
    tagged = client.post(
        f"/cases/{case_id}/queries/tags",
        data={"csrf_token": token, "query_ids": [str(ids["alien"])], "weight": "2"},
        follow_redirects=False,
    )
    assert tagged.status_code == 303, tagged.text
    assert _agree(api, client, setup) not in (plain, weighted)
    # Dropping a metric re-scores the latest run with the metrics left; all still agree.
    dropped = client.post(
        f"/cases/{case_id}/metrics",
        data={"csrf_token": token, "metric_scorer_ids": [metrics[0]], "aggregate": "mean"},
        follow_redirects=False,
    )
    assert dropped.status_code == 303, dropped.text
    assert _agree(api, client, setup) == plain
    latest = api.get(f"/api/v1/cases/{case_id}/runs/{setup['runs'][-1]}").json()
    assert [m["name"] for m in latest["metrics"]] == ["NDCG@10", "P@10"]


def test_every_query_row_lists_the_other_metrics_apart(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _rated_runs(api, session_factory)
    case_id, ids = setup["case_id"], setup["ids"]
    run = api.get(f"/api/v1/cases/{case_id}/runs/{setup['runs'][-1]}").json()
    by_query = {q["query_id"]: q["metric_scores"] for q in run["queries"]}
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    rows = page.select("#query-list li.query")
    assert [int(str(r["data-query-id"])) for r in rows] == list(ids.values())
    for row in rows:
        scores = by_query[int(str(row["data-query-id"]))]
        shown = one(row, ".query-metrics").get_text()
        # The primary (NDCG@10) is the row's badge, not repeated; values apart, rounded.
        p10, err = round(scores[str(setup["p10"])]), round(scores[str(setup["err"])])
        assert shown == f"P@10 {p10} · ERR@10 {err}"
    # star wars' stored P@10 and ERR@10, pinned: 100 and 50.78 (shown 51).
    assert one(rows[0], ".query-metrics").get_text() == "P@10 100 · ERR@10 51"


def test_the_history_and_compare_say_which_metric_and_mean(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    setup = _rated_runs(api, session_factory)
    case_id = setup["case_id"]
    assert api.patch(f"/api/v1/cases/{case_id}", json={"aggregate": "weighted_mean"}).is_success
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    assert one(page, "#case-history-chart")["aria-label"] == (
        "NDCG@10 as recorded when each run finished (mean), over 2 runs"
    )
    base, other = setup["runs"]
    compared = api.get(
        f"/api/v1/cases/{case_id}/runs/compare", params={"base": base, "other": other}
    ).json()
    assert (compared["scorer_name"], compared["aggregate"]) == ("NDCG@10", "weighted_mean")
