"""Many metrics per case, query tags and weights, end to end against a real engine."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker
from statsmodels.stats.multitest import multipletests

from app import cli
from app.db import session_scope
from app.models import Case
from app.runs import inputs as run_inputs
from app.runs import service as run_service
from app.runs import store as run_store
from app.runs.plan import FetchedQuery, score_fetched_metrics
from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint, scorer_id
from tests.support.quepid import fixture, imported, queries_of, with_code
from tests.support.scoring import expected_outcome

# The runner executes in threads with their own connections: its rows must be committed.
pytestmark = pytest.mark.runner

LINES = ["star wars\thead,scifi\t3", "star trek\tscifi\t1", "batman\thead", "zzzxqv qqwxj"]


def _case(api: ApiUser, url: str, **extra: Any) -> tuple[dict[str, Any], dict[str, int]]:
    endpoint = make_endpoint(api, url)
    case = make_case(
        api,
        endpoint["id"],
        scorer_id=scorer_id(api, "NDCG@10"),
        metric_scorer_ids=[scorer_id(api, "P@10"), scorer_id(api, "ERR@10")],
        **extra,
    )
    added = api.post(f"/api/v1/cases/{case['id']}/queries/bulk", json={"queries": LINES})
    assert added.status_code == 200, added.text
    return case, {q["text"]: q["id"] for q in added.json()["queries"]}


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _rate_top(
    api: ApiUser, case_id: int, run: dict[str, Any], grades: dict[str, list[int]]
) -> None:
    for query in run["queries"]:
        if query["text"] not in grades:
            continue
        docs = [d["id"] for d in query["docs"]]
        body = {
            "ratings": [
                {"doc_id": d, "rating": g}
                for d, g in zip(docs, grades[query["text"]], strict=False)
            ]
        }
        path = f"/api/v1/cases/{case_id}/queries/{query['query_id']}/ratings"
        assert api.put(path, json=body).status_code == 200


def test_a_case_keeps_its_metrics_and_aggregate(api: ApiUser, movies_engine: Any) -> None:
    case, _ids = _case(api, movies_engine.index_url)
    p10, err = scorer_id(api, "P@10"), scorer_id(api, "ERR@10")
    assert case["metric_scorer_ids"] == [p10, err] and case["aggregate"] == "mean"
    path = f"/api/v1/cases/{case['id']}"
    changed = api.patch(path, json={"metric_scorer_ids": [err], "aggregate": "weighted_mean"})
    assert changed.status_code == 200, changed.text
    got = api.get(path).json()
    assert (got["metric_scorer_ids"], got["aggregate"]) == ([err], "weighted_mean")
    assert api.patch(path, json={"aggregate": "median"}).status_code == 422
    assert api.patch(path, json={"metric_scorer_ids": [p10] * 13}).status_code == 422
    assert api.patch(path, json={"metric_scorer_ids": [999_999]}).status_code == 404
    assert api.get(path).json()["metric_scorer_ids"] == [err]


def test_queries_carry_tags_and_weights(api: ApiUser, movies_engine: Any) -> None:
    case, ids = _case(api, movies_engine.index_url)
    base = f"/api/v1/cases/{case['id']}/queries"
    listed = {q["text"]: (q["tags"], q["weight"]) for q in api.get(base).json()}
    assert listed == {
        "star wars": (["head", "scifi"], 3.0),
        "star trek": (["scifi"], 1.0),
        "batman": (["head"], 1.0),
        "zzzxqv qqwxj": ([], 1.0),
    }
    one = api.post(base, json={"text": "alien", "tags": ["typo"], "weight": 0.5})
    assert one.status_code == 201 and (one.json()["tags"], one.json()["weight"]) == (["typo"], 0.5)
    assert api.post(base, json={"text": "x", "weight": 0}).status_code == 422
    assert api.post(base, json={"text": "x", "tags": ["t" * 41]}).status_code == 422
    assert (
        api.post(base, json={"text": "x", "tags": [f"t{i}" for i in range(21)]}).status_code == 422
    )
    bad_line = api.post(f"{base}/bulk", json={"queries": ["ok", "bad\thead\tmany"]})
    assert bad_line.status_code == 422 and "query 1" in bad_line.text
    patched = api.patch(
        base,
        json={
            "query_ids": [ids["star wars"], ids["batman"]],
            "add_tags": ["brand"],
            "remove_tags": ["head"],
            "weight": 2,
        },
    )
    assert patched.status_code == 200, patched.text
    assert {q["text"]: (q["tags"], q["weight"]) for q in patched.json()["queries"]} == {
        "star wars": (["scifi", "brand"], 2.0),
        "batman": (["brand"], 2.0),
    }
    single = api.patch(f"{base}/{ids['star trek']}", json={"tags": ["a", "a", "b"], "weight": 4})
    assert (single.json()["tags"], single.json()["weight"]) == (["a", "b"], 4.0)
    missing = api.patch(base, json={"query_ids": [ids["batman"], 999_999], "weight": 9})
    assert missing.status_code == 404
    assert next(q for q in api.get(base).json() if q["text"] == "batman")["weight"] == 2.0
    assert api.patch(base, json={"query_ids": [], "weight": 1}).status_code == 422


def test_a_run_scores_every_metric_per_query_and_per_tag(api: ApiUser, movies_engine: Any) -> None:
    case, ids = _case(api, movies_engine.index_url)
    first = _run(api, case["id"])
    grades = {"star wars": [3, 0, 2, 1, 0, 3], "star trek": [0, 1, 0, 0, 2], "batman": [1]}
    _rate_top(api, case["id"], first, grades)
    run = _run(api, case["id"])
    ndcg, p10, err = (scorer_id(api, n) for n in ("NDCG@10", "P@10", "ERR@10"))
    assert [m["scorer_id"] for m in run["metrics"]] == [ndcg, p10, err]
    assert [m["name"] for m in run["metrics"]] == ["NDCG@10", "P@10", "ERR@10"]
    expected: dict[str, dict[int, float | None]] = {}
    for query in run["queries"]:
        docs = [d["id"] for d in query["docs"]]
        ratings = dict(zip(docs, grades.get(query["text"], []), strict=False))
        expected[query["text"]] = {
            sid: expected_outcome(api, name, docs, ratings).score
            for sid, name in ((ndcg, "NDCG@10"), (p10, "P@10"), (err, "ERR@10"))
        }
        assert query["metric_scores"] == {
            str(k): (pytest.approx(v) if v is not None else None)
            for k, v in expected[query["text"]].items()
        }
    scored = ["star wars", "star trek", "batman"]
    for metric in run["metrics"]:
        values = [expected[t][metric["scorer_id"]] for t in scored]
        assert metric["scored"] == 3
        assert metric["case_score"] == pytest.approx(sum(v or 0 for v in values) / 3)
        by_tag = {t["tag"]: t for t in metric["by_tag"]}
        assert set(by_tag) == {"head", "scifi"}
        head = [expected["star wars"][metric["scorer_id"]], expected["batman"][metric["scorer_id"]]]
        assert by_tag["head"]["count"] == 2
        assert by_tag["head"]["mean"] == pytest.approx(sum(v or 0 for v in head) / 2)
        assert by_tag["head"]["min"] == pytest.approx(min(v or 0 for v in head))
    assert run["metrics"][0]["case_score"] == pytest.approx(run["case_score"])

    # Weighted: Σ wᵢ·sᵢ / Σ wᵢ with weights star wars 3, star trek 1, batman 1 (the
    # unscored query's weight does not count); a re-score applies it to the stored run.
    api.patch(f"/api/v1/cases/{case['id']}", json={"aggregate": "weighted_mean"})
    rescored = api.post(f"/api/v1/cases/{case['id']}/runs/{run['id']}/rescore").json()
    s = {t: expected[t][ndcg] or 0.0 for t in scored}
    weighted = (3 * s["star wars"] + s["star trek"] + s["batman"]) / 5
    assert rescored["case_score"] == pytest.approx(weighted)
    assert rescored["metrics"][0]["case_score"] == pytest.approx(weighted)
    head_tag = next(t for t in rescored["metrics"][0]["by_tag"] if t["tag"] == "head")
    assert head_tag["mean"] == pytest.approx((3 * s["star wars"] + s["batman"]) / 4)
    # What the run recorded when it finished stays as it was (plain mean then).
    runs = api.get(f"/api/v1/cases/{case['id']}/runs").json()
    recorded = next(r for r in runs if r["id"] == run["id"])["recorded_metrics"]
    assert [m["scorer_id"] for m in recorded] == [ndcg, p10, err]
    assert recorded[0]["case_score"] == pytest.approx(sum(s.values()) / 3)
    assert ids["zzzxqv qqwxj"] in {q["query_id"] for q in rescored["queries"]}


def test_a_rating_change_rescores_every_metric_of_the_query(
    api: ApiUser, movies_engine: Any
) -> None:
    case, _ids = _case(api, movies_engine.index_url)
    run = _run(api, case["id"])
    _rate_top(api, case["id"], run, {"batman": [0, 3]})
    got = api.get(f"/api/v1/cases/{case['id']}/runs/{run['id']}").json()
    batman = next(q for q in got["queries"] if q["text"] == "batman")
    docs = [d["id"] for d in batman["docs"]]
    p10 = scorer_id(api, "P@10")
    want = expected_outcome(api, "P@10", docs, {docs[0]: 0, docs[1]: 3}).score
    assert batman["metric_scores"][str(p10)] == pytest.approx(want)
    assert next(m for m in got["metrics"] if m["scorer_id"] == p10)["scored"] == 1


def test_compare_gives_every_metric_with_holm_and_tag_deltas(
    api: ApiUser, movies_engine: Any
) -> None:
    case, _ids = _case(api, movies_engine.index_url)
    first = _run(api, case["id"])
    grades = {"star wars": [3, 0, 2, 1, 0, 3], "star trek": [0, 1, 0, 0, 2], "batman": [1]}
    _rate_top(api, case["id"], first, grades)
    base = _run(api, case["id"])
    api.patch(f"/api/v1/cases/{case['id']}", json={"rows": 3})
    other = _run(api, case["id"])
    got = api.get(
        f"/api/v1/cases/{case['id']}/runs/compare",
        params={"base": base["id"], "other": other["id"]},
    )
    assert got.status_code == 200, got.text
    body = got.json()
    metrics = body["metrics"]
    assert [m["name"] for m in metrics] == ["NDCG@10", "P@10", "ERR@10"]
    # The flips are seeded by the two runs: the same comparison gives the same p twice.
    again = api.get(
        f"/api/v1/cases/{case['id']}/runs/compare",
        params={"base": base["id"], "other": other["id"]},
    ).json()
    assert again["metrics"] == metrics and again["stats"] == body["stats"]
    # The primary metric is the comparison's own statistics.
    assert metrics[0]["delta"] == pytest.approx(body["stats"]["mean_delta"])
    assert metrics[0]["p_randomization"] == pytest.approx(body["stats"]["randomization_p"])
    assert metrics[0]["p_t"] == pytest.approx(body["stats"]["t_test_p"])
    # Every metric: the mean of the per-query deltas of the two runs' stored scores (the
    # ratings did not change between them), per case and per tag.
    before = {q["text"]: q["metric_scores"] for q in base["queries"]}
    after = {q["text"]: q["metric_scores"] for q in other["queries"]}
    for metric in metrics:
        key = str(metric["scorer_id"])
        deltas = {
            t: after[t][key] - before[t][key]
            for t in before
            if before[t][key] is not None and after[t][key] is not None
        }
        assert metric["n"] == len(deltas) == 3
        assert metric["delta"] == pytest.approx(sum(deltas.values()) / 3)
        # Every metric's randomization p (one shared matrix of flips) is, within Monte
        # Carlo error, the share of all 2^3 sign flips whose |sum| reaches the observed one.
        observed = abs(sum(deltas.values()))
        flips = itertools.product((1, -1), repeat=3)
        exact = (
            sum(
                abs(sum(s * d for s, d in zip(signs, deltas.values(), strict=True)))
                >= observed - 1e-9
                for signs in flips
            )
            / 8
        )
        assert metric["p_randomization"] == pytest.approx(exact, abs=0.02)
        head = next(t for t in metric["by_tag"] if t["tag"] == "head")
        assert head["count"] == 2
        assert head["delta"] == pytest.approx((deltas["star wars"] + deltas["batman"]) / 2)
    raw = [m["p_randomization"] for m in metrics]
    assert all(p is not None for p in raw)
    holm = multipletests(raw, method="holm")[1]
    assert [m["p_holm"] for m in metrics] == pytest.approx(list(holm))
    # The verdict rests on the primary metric's Holm-corrected p, and says so.
    assert body["decision_p"] == metrics[0]["p_holm"]
    assert body["verdict"] == "too_few" and "Holm's correction over 3 metrics" in body["summary"]
    # A run compared with itself under today's ratings: nothing moved.
    same = api.get(f"/api/v1/cases/{case['id']}/runs/compare", params={"base": other["id"]})
    assert [m["delta"] for m in same.json()["metrics"]] == [0.0, 0.0, 0.0]


def test_cli_run_fails_under_each_metric_bar_and_scores_a_tag(
    api: ApiUser,
    movies_engine: Any,
    db_url: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case, _ids = _case(api, movies_engine.index_url)
    first = _run(api, case["id"])
    _rate_top(api, case["id"], first, {"star wars": [3, 0, 2], "batman": [0, 0, 1]})
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    cid = str(case["id"])
    assert cli.main(["run", cid, "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    scores = {m["name"]: m["case_score"] for m in whole["metrics"]}
    assert list(scores) == ["NDCG@10", "P@10", "ERR@10"] and all(scores.values())
    assert {q["text"]: q["tags"] for q in whole["queries"]}["star wars"] == ["head", "scifi"]

    bars = ["--fail-under", "ndcg@10=0", "--fail-under", f"P@10={scores['P@10'] + 1}"]
    assert cli.main(["run", cid, *bars, "--fail-under", "err@10=101"]) == 1
    err = capsys.readouterr().err
    assert "P@10" in err and "ERR@10" in err and "NDCG@10" not in err
    assert cli.main(["run", cid, "--fail-under", "p@10=0", "--fail-under", "1"]) == 0
    # A bar or tag that names nothing is refused before anything runs: no run is added.
    runs_before = len(api.get(f"/api/v1/cases/{cid}/runs").json())
    assert cli.main(["run", cid, "--fail-under", "map@3=10"]) == 2
    err = capsys.readouterr().err
    assert "No metric named 'map@3' in case" in err and "NDCG@10, P@10, ERR@10" in err
    assert cli.main(["run", cid, "--tag", "nosuchtag"]) == 2
    err = capsys.readouterr().err
    assert "No query of case" in err and "'nosuchtag'" in err and "head, scifi" in err
    assert len(api.get(f"/api/v1/cases/{cid}/runs").json()) == runs_before
    with pytest.raises(SystemExit) as usage:
        cli.main(["run", cid, "--fail-under", "ndcg@10=high"])
    assert usage.value.code == 2

    # Only the head queries (star wars, batman): their metrics, and the bare bar is theirs.
    assert cli.main(["run", cid, "--json", "--tag", "head"]) == 0
    head = json.loads(capsys.readouterr().out)
    assert head["tag"] == "head"
    assert sorted(q["text"] for q in head["queries"]) == ["batman", "star wars"]
    by_text = {q["text"]: q["metric_scores"] for q in head["queries"]}
    for metric in head["metrics"]:
        values = [by_text[t][str(metric["scorer_id"])] for t in ("batman", "star wars")]
        assert metric["scored"] == 2
        assert metric["case_score"] == pytest.approx(sum(values) / 2)
    primary = head["metrics"][0]["case_score"]
    assert cli.main(["run", cid, "--tag", "head", "--fail-under", str(primary + 0.01)]) == 1
    captured = capsys.readouterr()
    assert "over the queries tagged 'head' (the bars apply to these)" in captured.out
    assert f"Case score (NDCG@10) over the queries tagged 'head' {primary:.2f} is below" in (
        captured.err
    )
    assert cli.main(["run", cid, "--tag", "head", "--fail-under", str(primary - 0.01)]) == 0


def test_chunks_of_a_queued_run_store_every_metric(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    """The worker path (a run split into chunks), driven by hand: no engine is needed."""
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    ndcg, p10 = scorer_id(api, "NDCG@10"), scorer_id(api, "P@10")
    case = make_case(api, endpoint["id"], scorer_id=ndcg, metric_scorer_ids=[p10])
    added = api.post(
        f"/api/v1/cases/{case['id']}/queries/bulk", json={"queries": ["a\tx", "b\tx", "c"]}
    )
    ids = {q["text"]: q["id"] for q in added.json()["queries"]}
    ranked = {"a": ["1", "2", "3"], "b": ["4", "5"], "c": ["6"]}
    ratings = {ids["a"]: {"2": 3.0}, ids["b"]: {"4": 1.0, "5": 2.0}, ids["c"]: {}}
    with session_scope(session_factory) as session:
        stored = session.get(Case, case["id"])
        assert stored is not None
        run = run_service.create_run(session=session, case=stored)
        run_id = run.id
        chunks = run_store.plan_chunks(session=session, run_id=run_id, chunk_size=2)
    assert len(chunks) == 2
    for number, chunk in enumerate(chunks):
        with session_scope(session_factory) as session:
            plan = run_inputs.load_plan(session=session, run_id=run_id, query_ids=chunk)
            assert run_store.start_chunk(session=session, plan=plan)
            fetched = [
                FetchedQuery(
                    plan=q,
                    docs=[
                        {"id": d, "rank": r + 1, "fields": {}} for r, d in enumerate(ranked[q.text])
                    ],
                    num_found=len(ranked[q.text]),
                    error=None,
                    duration_ms=1.0,
                )
                for q in plan.queries
            ]
            outcomes, scores = score_fetched_metrics(plan=plan, fetched=fetched, ratings=ratings)
            run_store.store_chunk(
                session=session,
                plan=plan,
                chunk=number,
                query_ids=chunk,
                fetched=fetched,
                outcomes=outcomes,
                ratings=ratings,
                metric_scores=scores,
            )
    got = api.get(f"/api/v1/cases/{case['id']}/runs/{run_id}").json()
    assert got["status"] == "finished"
    by_text = {q["text"]: q for q in got["queries"]}
    for text in ("a", "b"):
        want = expected_outcome(api, "P@10", ranked[text], ratings[ids[text]]).score
        assert by_text[text]["metric_scores"][str(p10)] == pytest.approx(want)
    assert by_text["c"]["metric_scores"] == {str(ndcg): None, str(p10): None}
    p10_metric = got["metrics"][1]
    assert (p10_metric["name"], p10_metric["scored"]) == ("P@10", 2)
    assert p10_metric["by_tag"][0]["tag"] == "x" and p10_metric["by_tag"][0]["count"] == 2
    recorded = api.get(f"/api/v1/cases/{case['id']}/runs").json()[0]["recorded_metrics"]
    assert [m["scorer_id"] for m in recorded] == [ndcg, p10]
    assert recorded[1]["case_score"] == pytest.approx(p10_metric["case_score"])


def test_a_quepid_import_carries_tags_and_weight_from_query_options(api: ApiUser) -> None:
    data = with_code(fixture("movies_es_case.json"), [0, 1])
    options = [
        {"genre": "Adventure", "tags": ["head", "scifi"], "weight": 4},
        {"tags": "brand, head", "weight": -2},  # a weight that is not > 0 stays 1
        {"weight": "heavy", "tags": [1, "kids"]},
    ]
    for query, option in zip(data["queries"], options, strict=True):
        query["options"] = option
    result = imported(api, data)
    queries = {q["text"]: q for q in queries_of(api, result["id"])}
    assert (queries["star wars"]["tags"], queries["star wars"]["weight"]) == (
        ["head", "scifi"],
        4.0,
    )
    assert (queries["batman"]["tags"], queries["batman"]["weight"]) == (["brand", "head"], 1.0)
    assert (queries["toy story"]["tags"], queries["toy story"]["weight"]) == (["kids"], 1.0)
    assert queries["star wars"]["options"]["tags"] == ["head", "scifi"]  # options unchanged


def test_a_csv_ratings_import_carries_tags_and_weight_columns(api: ApiUser) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    case = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))
    api.post(f"/api/v1/cases/{case['id']}/queries", json={"text": "batman", "tags": ["old"]})
    path = f"/api/v1/cases/{case['id']}/ratings/import?format=csv"
    body = (
        "query,docid,rating,tags,weight\n"
        'star wars,1,3,"head,scifi",5\n'
        "star wars,2,1,,\n"
        "batman,3,2,brand,\n"
        "alien,4,0,,0.5\n"
    )
    answer = api.post(path, content=body, headers={"Content-Type": "text/csv"})
    assert answer.status_code == 200, answer.text
    queries = {
        q["text"]: (q["tags"], q["weight"])
        for q in api.get(f"/api/v1/cases/{case['id']}/queries").json()
    }
    assert queries == {
        "batman": (["old", "brand"], 1.0),
        "star wars": (["head", "scifi"], 5.0),
        "alien": ([], 0.5),
    }
    bad = "query,docid,rating,weight\nx,1,1,heavy\ny,2,1,-3\n"
    refused = api.post(path, content=bad, headers={"Content-Type": "text/csv"})
    assert refused.status_code == 422
    assert [e["line"] for e in refused.json()["errors"]] == [2, 3]
    assert "x" not in {q["text"] for q in api.get(f"/api/v1/cases/{case['id']}/queries").json()}


def test_a_rating_change_keeps_the_weighted_case_score(api: ApiUser, movies_engine: Any) -> None:
    case, ids = _case(api, movies_engine.index_url, aggregate="weighted_mean")
    run = _run(api, case["id"])
    _rate_top(api, case["id"], run, {"star wars": [3, 3, 3]})
    batman = next(q for q in run["queries"] if q["text"] == "batman")
    # The rating of batman's second result re-scores that query alone (weights 3 and 1).
    path = f"/api/v1/cases/{case['id']}/queries/{ids['batman']}/ratings"
    body = {"ratings": [{"doc_id": batman["docs"][1]["id"], "rating": 2}]}
    answer = api.put(path, json=body).json()
    got = api.get(f"/api/v1/cases/{case['id']}/runs/{run['id']}").json()
    scores = {q["text"]: q["score"] for q in got["queries"] if q["status"] == "scored"}
    assert set(scores) == {"star wars", "batman"} and 0 < scores["batman"] < 100
    weighted = (3 * scores["star wars"] + scores["batman"]) / 4
    assert answer["case_score"] == pytest.approx(weighted)
    assert got["case_score"] == pytest.approx(weighted)
    assert got["metrics"][0]["case_score"] == pytest.approx(weighted)
