"""A run in which every query errored ends "failed" (API.md), has no score anywhere, and the
pages show no score for it and why, never the previous run's numbers."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.flaky_engine import TEMPLATE, flaky_engine
from tests.support.pages import doc, finished_run, login, one, soup

pytestmark = pytest.mark.runner  # starts runs

TEXTS = ["query 0", "query 1"]


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_a_run_where_every_query_errored_is_failed_and_scored_nowhere(
    api: ApiUser, client: TestClient
) -> None:
    with flaky_engine(set(TEXTS)) as url:
        endpoint = make_endpoint(api, url)
        ndcg, p10 = scorer_id(api, "NDCG@10"), scorer_id(api, "P@10")
        case = make_case(
            api,
            endpoint["id"],
            query_template=TEMPLATE,
            knobs={"k": 1},
            scorer_id=ndcg,
            metric_scorer_ids=[p10],
        )
        case_id = case["id"]
        ids = add_queries(api, case_id, [f"{t}\thead" for t in TEXTS])
        for qid in ids.values():
            body = {"ratings": [{"doc_id": "good", "rating": 3}, {"doc_id": "bad", "rating": 0}]}
            path = f"/api/v1/cases/{case_id}/queries/{qid}/ratings"
            assert api.put(path, json=body).status_code == 200
        # k=1: both hard queries get "bad" first: NDCG@10 = 100 / log2(3) = 63.0930 each.
        first = _run(api, case_id)
        assert (first["status"], round(first["case_score"], 4)) == ("finished", 63.0930)
        assert api.patch(f"/api/v1/cases/{case_id}", json={"knobs": {"k": 2}}).status_code == 200
        failed = _run(api, case_id)
    assert failed["status"] == "failed"
    assert failed["case_score"] is None and failed["recorded_score"] is None
    assert (failed["scored"], failed["errors"]) == (0, 2)
    assert failed["error"] == "Every query errored: the run has no score."
    assert [m["case_score"] for m in failed["metrics"]] == [None, None]
    listed = api.get(f"/api/v1/cases/{case_id}/runs").json()
    assert [r["status"] for r in listed] == ["failed", "finished"]

    # The page's twin: no score, no metric of the run before, no stale tag table.
    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    assert twin["score"]["case_score"] is None and twin["score"]["run_id"] == failed["id"]
    assert twin["metrics"]["run_id"] == failed["id"]
    assert [m["case_score"] for m in twin["metrics"]["metrics"]] == [None, None]
    assert all(c["mean"] is None for row in twin["metrics"]["tags"] for c in row["cells"])
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    assert one(page, "#case-score")["data-case-score"] == ""
    for tile in page.select("#metric-panel .metric-tile"):
        assert one(tile, ".badge").get("data-score") in (None, "")
    # The cases list shows it as the latest run, with no score.
    cases = api.get("/api/v1/pages/cases").json()
    row = next(c for c in cases["cases"] if c["id"] == case_id)
    assert row["last_score"] is None


def test_an_old_all_errored_run_reads_failed_after_the_migration(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    case_id = make_case(api, endpoint["id"])["id"]
    ids = add_queries(api, case_id, TEXTS)
    classic = scorer_id(api, "Classic")
    ok = finished_run(
        session_factory,
        case_id,
        {ids["query 0"]: {"score": 50.0, "docs": [doc("1", "A", 1)]}},
        scorer=classic,
        case_score=50.0,
    )
    errored = {q: {"status": "error", "error": "refused", "num_found": None} for q in ids.values()}
    old = finished_run(session_factory, case_id, errored, scorer=classic)
    # 0023_one's upgrade, run on this database.
    migration = import_module("migrations.versions.0023_one")
    with session_scope(session_factory) as session:
        session.execute(migration.marking_failed())
        session.commit()
        assert session.execute(text("select count(*) from runs")).scalar() == 2
    runs = {r["id"]: r["status"] for r in api.get(f"/api/v1/cases/{case_id}/runs").json()}
    assert runs == {old: "failed", ok: "finished"}
    twin = api.get(f"/api/v1/pages/cases/{case_id}").json()
    assert twin["score"]["run_id"] == old and twin["score"]["case_score"] is None
