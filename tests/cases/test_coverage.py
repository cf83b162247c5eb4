"""Coverage and query score history over stored runs, JSON and pages agreeing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.scorers.config import build_config
from app.scoring import QueryInput, ScoreDoc, score_query
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


def _ndcg(api: ApiUser) -> object:
    preset = next(s for s in api.get("/api/v1/scorers").json() if s["name"] == "NDCG@10")
    return build_config(
        kind=preset["kind"],
        params=preset["params"],
        scale=preset["scale"],
        scale_labels=None,
        code=None,
        max_score=None,
    )


def test_coverage_counts_unrated_and_bands(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    empty = api.get(f"/api/v1/cases/{case_id}/coverage").json()
    assert empty["run_id"] is None and empty["queries"] == []
    ids = add_queries(api, case_id, ["alpha", "beta"])
    docs = {
        ids["alpha"]: {"docs": [doc("1", "One", 1), doc("2", "Two", 2), doc("3", "Three", 3)]},
        ids["beta"]: {"docs": [doc("7", "Seven", 1)]},
    }
    run_id = finished_run(session_factory, case_id, docs, scorer=ndcg)
    put = api.put(
        f"/api/v1/cases/{case_id}/queries/{ids['alpha']}/ratings",
        json={"ratings": [{"doc_id": "1", "rating": 3}]},
    )
    assert put.status_code == 200
    data = api.get(f"/api/v1/cases/{case_id}/coverage").json()
    assert data["run_id"] == run_id
    by_id = {q["query_id"]: q for q in data["queries"]}
    alpha, beta = by_id[ids["alpha"]], by_id[ids["beta"]]
    assert (alpha["unrated"], alpha["unrated_ids"]) == (2, ["2", "3"])
    assert (beta["unrated"], beta["status"], beta["score"]) == (1, "unscored", None)
    config = _ndcg(api)

    def score(ids_: list[str], ratings: dict[str, float]) -> float | None:
        query = QueryInput(docs=[ScoreDoc(id=i) for i in ids_], ratings=ratings)
        return score_query(config, query).score  # type: ignore[arg-type]

    assert alpha["score_min"] == score(["1", "2", "3"], {"1": 3, "2": 0, "3": 0})
    assert alpha["score_max"] == score(["1", "2", "3"], {"1": 3, "2": 3, "3": 3})
    assert beta["score_max"] == score(["7"], {"7": 3})
    assert data["unrated"] == 3 and data["queries_with_unrated"] == 2
    assert data["case_score"] == alpha["score"]
    # Beta with its only doc at 0 has no ideal ranking: unscored, so left out of the mean.
    assert beta["score_min"] is None
    assert data["case_score_min"] == alpha["score_min"]
    assert data["case_score_max"] == pytest.approx((alpha["score_max"] + beta["score_max"]) / 2)
    next_docs = [(r["query_id"], r["doc_id"]) for r in data["rate_next"]]
    assert set(next_docs) == {(ids["alpha"], "2"), (ids["alpha"], "3"), (ids["beta"], "7")}
    assert data["rate_next"][0]["points"] >= data["rate_next"][-1]["points"]

    login(client)
    page = soup(client.get(f"/cases/{case_id}/coverage"))
    assert [li["data-doc-id"] for li in page.select("#rate-next li")] == [
        r["doc_id"] for r in data["rate_next"]
    ]
    assert one(page, "#coverage-unrated .n").get_text() == "3"
    row = one(page, f"#coverage-queries tr[data-query-id='{ids['alpha']}']")
    assert float(attr(one(row, "td.band"), "data-max")) == alpha["score_max"]


def test_query_history_and_sparkline(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["alpha", "beta"])
    runs = [
        finished_run(
            session_factory,
            case_id,
            {ids["alpha"]: {"score": s, "docs": [doc("1", "One", 1)]}},
            scorer=ndcg,
        )
        for s in (10.0, 40.0, 25.0)
    ]
    data = api.get(f"/api/v1/cases/{case_id}/queries/{ids['alpha']}/history").json()
    assert [(p["run_id"], p["score"]) for p in data["points"]] == list(
        zip(runs, [10.0, 40.0, 25.0], strict=True)
    )
    beta = api.get(f"/api/v1/cases/{case_id}/queries/{ids['beta']}/history").json()
    assert [p["status"] for p in beta["points"]] == [None, None, None]
    listed = api.get(f"/api/v1/pages/cases/{case_id}/query-list").json()
    history = {row["id"]: [p["score"] for p in row["history"]] for row in listed["items"]}
    assert history == {ids["alpha"]: [10.0, 40.0, 25.0], ids["beta"]: []}
    login(client)
    case_page = soup(client.get(f"/cases/{case_id}"))
    assert one(case_page, f"#query-{ids['alpha']} .query-history")["data-points"] == "3"
    assert not case_page.select(f"#query-{ids['beta']} .query-history")
    page = soup(client.get(f"/cases/{case_id}/queries/{ids['alpha']}/history"))
    assert len(page.select("#query-history-chart circle")) == 3
    assert api.get(f"/api/v1/cases/{case_id}/queries/999999/history").status_code == 404
