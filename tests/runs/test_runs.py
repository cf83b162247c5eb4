"""Runs end to end against a real engine (osmem-server with the movie corpus)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from app import cli
from app.db import session_scope
from app.demo.corpus import index_movies, start_osmem
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.scoring import expected_outcome

# The runner executes in threads with their own connections: its rows must be committed.
pytestmark = pytest.mark.runner

QUERIES = ["star wars", "star trek", "batman", "zzzxqv qqwxj"]


def _ndcg_case(api: ApiUser, url: str, **extra: Any) -> tuple[dict[str, Any], dict[str, int]]:
    endpoint = make_endpoint(api, url, **extra)
    case = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))
    return case, add_queries(api, case["id"], QUERIES)


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_run_scores_every_query_as_the_scoring_function_would(
    api: ApiUser, movies_engine: Any
) -> None:
    case, ids = _ndcg_case(api, movies_engine.index_url)
    first = _run(api, case["id"])
    assert first["status"] == "finished" and first["try_number"] == 1
    by_text = {q["text"]: q for q in first["queries"]}
    star_wars = [d["id"] for d in by_text["star wars"]["docs"]]
    titles = [d["fields"]["title"] for d in by_text["star wars"]["docs"]]
    assert sum("Star Wars" in t for t in titles[:7]) >= 5
    assert by_text["star wars"]["num_found"] >= len(star_wars) > 0
    assert by_text["zzzxqv qqwxj"]["num_found"] == 0
    # Nothing is rated yet: every query is unscored and the case score is null.
    assert {q["status"] for q in first["queries"]} == {"unscored"}
    assert first["case_score"] is None and first["unscored"] == 4

    ratings = {star_wars[0]: 1, star_wars[1]: 3, star_wars[2]: 0, "not-returned": 2}
    path = f"/api/v1/cases/{case['id']}/queries/{ids['star wars']}/ratings"
    put = api.put(path, json={"ratings": [{"doc_id": k, "rating": v} for k, v in ratings.items()]})
    expected = expected_outcome(api, "NDCG@10", star_wars, ratings)
    rescored = put.json()
    assert rescored["query_score"]["run_id"] == first["id"]
    assert rescored["query_score"]["score"] == pytest.approx(expected.score, abs=1e-9)
    assert rescored["case_score"] == pytest.approx(expected.score, abs=1e-9)

    second = _run(api, case["id"])
    assert second["id"] != first["id"]
    for query in second["queries"]:
        docs = [d["id"] for d in query["docs"]]
        query_ratings = ratings if query["text"] == "star wars" else {}
        want = expected_outcome(api, "NDCG@10", docs, query_ratings)
        assert (query["status"], query["score"]) == (want.status, want.score)
        assert [d["rating"] for d in query["docs"]] == [query_ratings.get(d) for d in docs]
    assert second["case_score"] == pytest.approx(expected.score)
    assert (second["scored"], second["unscored"], second["errors"]) == (1, 3, 0)
    runs = api.get(f"/api/v1/cases/{case['id']}/runs").json()
    assert [r["id"] for r in runs] == [second["id"], first["id"]]
    # The first run finished with nothing rated: that record stays, beside today's score.
    assert runs[1]["recorded_score"] is None
    assert runs[1]["case_score"] == pytest.approx(expected.score, abs=1e-9)
    assert runs[0]["recorded_score"] == pytest.approx(expected.score)
    assert runs[0]["recorded_scorer_id"] == runs[0]["scorer_id"] is not None
    assert api.get("/api/v1/cases").json()[0]["last_score"] == pytest.approx(expected.score)


def test_a_run_started_without_wait_reports_progress_then_finishes(
    api: ApiUser, movies_engine: Any
) -> None:
    case, _ids = _ndcg_case(api, movies_engine.index_url)
    started = api.post(f"/api/v1/cases/{case['id']}/runs")
    assert started.status_code == 202
    assert started.json()["status"] in ("queued", "running")
    run_id = started.json()["id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run = api.get(f"/api/v1/cases/{case['id']}/runs/{run_id}").json()
        assert 0 <= run["progress"]["done"] <= run["progress"]["total"] == 4
        if run["status"] == "finished":
            break
        time.sleep(0.05)
    assert run["status"] == "finished" and len(run["queries"]) == 4
    assert run["trigger"] == "api"  # started over the API, not with the case page's button


def test_older_tries_stay_runnable(api: ApiUser, movies_engine: Any) -> None:
    case, _ids = _ndcg_case(api, movies_engine.index_url)
    api.patch(f"/api/v1/cases/{case['id']}", json={"rows": 3})
    latest = _run(api, case["id"])
    assert latest["try_number"] == 2
    assert max(len(q["docs"]) for q in latest["queries"]) == 3
    old = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true", json={"try_number": 1}).json()
    assert old["try_number"] == 1 and max(len(q["docs"]) for q in old["queries"]) == 10
    missing = api.post(f"/api/v1/cases/{case['id']}/runs", json={"try_number": 9})
    assert missing.status_code == 404


def test_an_engine_that_is_down_makes_query_errors_and_a_failed_run(
    api: ApiUser, engine_down_url: str
) -> None:
    case, _ids = _ndcg_case(api, engine_down_url + "/movies", timeout_s=2)
    run = _run(api, case["id"])
    # Every query errored: the run is "failed" (API.md), each query keeps its own error.
    assert run["status"] == "failed"
    assert run["errors"] == 4 and run["case_score"] is None
    assert all(q["status"] == "error" and q["error"] for q in run["queries"])


def test_a_missing_id_field_is_that_querys_error(api: ApiUser, movies_engine: Any) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"], field_spec="id:imdb_id title:title")
    add_queries(api, case["id"], ["batman"])
    run = _run(api, case["id"])
    assert run["status"] == "failed"  # its one query errored
    assert run["queries"][0]["status"] == "error"
    assert "imdb_id" in run["queries"][0]["error"]


def test_engine_stopped_mid_run(api: ApiUser) -> None:
    server = start_osmem()
    try:
        index_movies(server.url, "movies")
        endpoint = make_endpoint(
            api, f"{server.url}/movies", max_concurrency=1, requests_per_minute=600, timeout_s=2
        )
        case = make_case(api, endpoint["id"])
        add_queries(api, case["id"], [f"star {i}" for i in range(30)])
        started = api.post(f"/api/v1/cases/{case['id']}/runs").json()
        threading.Timer(1.0, server.close).start()
        deadline = time.monotonic() + 60
        run: dict[str, Any] = {}
        while time.monotonic() < deadline:
            run = api.get(f"/api/v1/cases/{case['id']}/runs/{started['id']}").json()
            if run["status"] in ("finished", "failed"):
                break
            time.sleep(0.1)
    finally:
        server.close()
    assert run["status"] == "finished"
    statuses = [q["status"] for q in run["queries"]]
    assert "error" in statuses and statuses.count("error") < 30
    assert len(statuses) == 30


def test_cli_run_prints_scores_and_fails_under_the_threshold(
    api: ApiUser,
    movies_engine: Any,
    db_url: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case, ids = _ndcg_case(api, movies_engine.index_url)
    first = _run(api, case["id"])
    top = first["queries"][0]["docs"][0]["id"]
    api.put(
        f"/api/v1/cases/{case['id']}/queries/{ids['star wars']}/ratings",
        json={"ratings": [{"doc_id": top, "rating": 3}]},
    )
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    assert cli.main(["run", str(case["id"]), "--fail-under", "101"]) == 1
    table = capsys.readouterr().out
    assert "star wars" in table and "case score" in table
    assert cli.main(["run", str(case["id"]), "--json", "--fail-under", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "finished" and report["case_score"] > 0
    assert cli.main(["run", "999999"]) == 2


def test_an_older_run_is_rescored_with_current_ratings_on_request(
    api: ApiUser, movies_engine: Any
) -> None:
    case, ids = _ndcg_case(api, movies_engine.index_url)
    older, latest = _run(api, case["id"]), _run(api, case["id"])
    star_wars = [d["id"] for d in older["queries"][0]["docs"]]
    ratings = {star_wars[2]: 3, star_wars[0]: 1}
    api.put(
        f"/api/v1/cases/{case['id']}/queries/{ids['star wars']}/ratings",
        json={"ratings": [{"doc_id": k, "rating": v} for k, v in ratings.items()]},
    )
    path = f"/api/v1/cases/{case['id']}/runs"
    assert api.get(f"{path}/{latest['id']}").json()["scored"] == 1
    assert api.get(f"{path}/{older['id']}").json()["scored"] == 0
    rescored = api.post(f"{path}/{older['id']}/rescore").json()
    want = expected_outcome(api, "NDCG@10", star_wars, ratings)
    assert rescored["queries"][0]["score"] == pytest.approx(want.score)
    assert rescored["case_score"] == pytest.approx(want.score)
    assert rescored["queries"][0]["docs"][2]["rating"] == 3


def test_runs_left_unfinished_by_a_stop_are_marked_failed(
    api: ApiUser, session_factory: Any
) -> None:
    case, _ids = _ndcg_case(api, "http://127.0.0.1:9/movies")
    with session_scope(session_factory) as session:
        from app.models import Case
        from app.runs import inputs as run_inputs
        from app.runs import orphans as run_orphans
        from app.runs import service as run_service
        from app.runs import store as run_store

        found = session.get(Case, case["id"])
        assert found is not None
        stale = run_service.create_run(session=session, case=found)
        plan = run_inputs.load_plan(session=session, run_id=stale.id)
        run_store.mark_running(session=session, plan=plan)
        # Its heartbeat is fresh: with a one-minute lease it is still some process's run.
        assert run_orphans.fail_interrupted_runs(session=session, lease_s=60) == 0
        assert run_orphans.fail_interrupted_runs(session=session, lease_s=0) == 1
    run = api.get(f"/api/v1/cases/{case['id']}/runs/{stale.id}").json()
    assert run["status"] == "failed" and "Interrupted" in run["error"]


def test_a_run_with_explain_keeps_the_engines_explanations(
    api: ApiUser, movies_engine: Any
) -> None:
    case, _ids = _ndcg_case(api, movies_engine.index_url)
    plain = _run(api, case["id"])
    assert plain["explain"] is False
    assert all(d.get("explain") is None for q in plain["queries"] for d in q["docs"])
    response = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true", json={"explain": True})
    explained = response.json()
    assert explained["explain"] is True
    top = explained["queries"][0]["docs"][0]
    assert isinstance(top["explain"], dict) and top["explain"]["value"] > 0
