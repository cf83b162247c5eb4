"""Comparing runs against a real engine: both rankings re-scored with the current ratings."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case
from app.runs import service as run_service
from app.scoring import Outcome
from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint
from tests.support.compare import QUERIES as QUERIES
from tests.support.compare import _compare as _compare
from tests.support.compare import _docs as _docs
from tests.support.compare import _rate as _rate
from tests.support.compare import _run as _run
from tests.support.compare import two_tries as two_tries
from tests.support.scoring import expected_outcome

# The runner executes in threads with their own connections: its rows must be committed.
pytestmark = pytest.mark.runner


def _expected(
    api: ApiUser, run: dict[str, Any], ratings: dict[int, dict[str, float]]
) -> dict[int, Outcome]:
    return {
        qid: expected_outcome(api, "NDCG@10", [d["id"] for d in docs], ratings[qid])
        for qid, docs in _docs(run).items()
    }


def _mean(outcomes: dict[int, Outcome]) -> float:
    scores = [o.score for o in outcomes.values() if o.status == "scored" and o.score is not None]
    return sum(scores) / len(scores)


def test_two_runs_are_compared_with_the_current_ratings(
    api: ApiUser, two_tries: dict[str, Any]
) -> None:
    case_id, ids, ratings = two_tries["case_id"], two_tries["ids"], two_tries["ratings"]
    runs_path = f"/api/v1/cases/{case_id}/runs"
    older_id, newer_id = sorted(r["id"] for r in api.get(runs_path).json())
    older = api.get(f"{runs_path}/{older_id}").json()
    newer = api.get(f"{runs_path}/{newer_id}").json()

    response = _compare(api, case_id, base=older_id, other=newer_id)
    assert response.status_code == 200, response.text
    data = response.json()

    base, other = _expected(api, older, ratings), _expected(api, newer, ratings)
    by_id = {q["query_id"]: q for q in data["queries"]}
    assert set(by_id) == set(ids.values())
    for qid in base:
        row = by_id[qid]
        assert (row["base_status"], row["base_score"]) == (base[qid].status, base[qid].score)
        assert (row["other_status"], row["other_score"]) == (other[qid].status, other[qid].score)
    wars, trek = by_id[ids["star wars"]], by_id[ids["star trek"]]
    assert wars["delta"] == other[ids["star wars"]].score - base[ids["star wars"]].score  # type: ignore[operator]
    assert wars["delta"] < 0 and wars["change"] == "worsened"
    assert trek["delta"] == 0 and trek["change"] == "unchanged"
    assert by_id[ids["batman"]]["delta"] is None
    assert by_id[ids["batman"]]["change"] == "incomparable"
    alien = by_id[ids["alien"]]
    assert (alien["base_status"], alien["change"]) == (None, "only_other")
    assert alien["other_score"] == other[ids["alien"]].score and alien["delta"] is None

    assert data["base"]["case_score"] == pytest.approx(_mean(base), abs=1e-12)
    assert data["other"]["case_score"] == pytest.approx(_mean(other), abs=1e-12)
    assert data["case_score_delta"] == pytest.approx(_mean(other) - _mean(base), abs=1e-12)
    # The headline is the paired mean over star wars and star trek only (scored in both).
    paired = (wars["delta"] + trek["delta"]) / 2
    assert data["headline_delta"] == pytest.approx(paired, abs=1e-12)
    assert data["headline_delta"] == data["stats"]["mean_delta"]
    assert data["headline_change"] == "worsened"
    assert "1 query only in other; 1 query not scored in both" in data["sets_differ"]
    assert data["base"]["current_ratings"] and data["other"]["current_ratings"]
    assert (data["base"]["run_id"], data["base"]["try_number"]) == (older_id, 1)
    assert (data["other"]["run_id"], data["other"]["try_number"]) == (newer_id, 2)
    assert data["counts"] == {
        "improved": 0,
        "worsened": 1,
        "unchanged": 1,
        "incomparable": 1,
        "only_base": 0,
        "only_other": 1,
        "only_in_one": 1,
    }
    assert data["k"] == 10 and data["sort"] == "delta"
    assert data["queries"][0]["query_id"] == ids["star wars"]  # the biggest drop first

    old_docs, new_docs = _docs(older)[ids["star wars"]], _docs(newer)[ids["star wars"]]
    old_top, new_top = [d["id"] for d in old_docs[:10]], [d["id"] for d in new_docs[:10]]
    left = [d for d in old_docs[:10] if d["id"] not in new_top]
    assert len(left) == 5
    assert [(d["id"], d["title"], d["rank"]) for d in wars["left"]] == [
        (d["id"], d["fields"]["title"], d["rank"]) for d in left
    ]
    assert [d["id"] for d in wars["entered"]] == [i for i in new_top if i not in old_top]
    star_ratings = ratings[ids["star wars"]]
    assert [d["rating"] for d in wars["left"]] == [star_ratings.get(d["id"]) for d in left]


def test_comparing_writes_nothing(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id = two_tries["case_id"]
    runs_path = f"/api/v1/cases/{case_id}/runs"
    older_id, newer_id = sorted(r["id"] for r in api.get(runs_path).json())
    before = [api.get(f"{runs_path}/{i}").json() for i in (older_id, newer_id)]
    # Rated after it ran: the older run's stored scores are stale, and must stay so.
    assert before[0]["case_score"] is None and before[0]["scored"] == 0
    assert _compare(api, case_id, base=older_id, other=newer_id).status_code == 200
    assert _compare(api, case_id, base=older_id).status_code == 200
    after = [api.get(f"{runs_path}/{i}").json() for i in (older_id, newer_id)]
    assert after == before


def test_a_run_against_the_current_ratings(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id, ids, ratings = two_tries["case_id"], two_tries["ids"], two_tries["ratings"]
    runs_path = f"/api/v1/cases/{case_id}/runs"
    older_id = min(r["id"] for r in api.get(runs_path).json())
    older = api.get(f"{runs_path}/{older_id}").json()
    data = _compare(api, case_id, base=older_id).json()
    rescored = _expected(api, older, ratings)
    assert data["base"]["current_ratings"] is False and data["other"]["current_ratings"]
    assert data["base"]["run_id"] == data["other"]["run_id"] == older_id
    assert data["base"]["case_score"] is None  # as stored: nothing was rated when it ran
    assert data["other"]["case_score"] == pytest.approx(_mean(rescored), abs=1e-12)
    by_id = {q["query_id"]: q for q in data["queries"]}
    assert set(by_id) == {ids[t] for t in QUERIES}
    for qid, outcome in rescored.items():
        row = by_id[qid]
        assert (row["base_status"], row["base_score"]) == ("unscored", None)
        assert (row["other_status"], row["other_score"]) == (outcome.status, outcome.score)
        assert row["entered"] == row["left"] == []  # the same ranking on both sides


def test_swapped_runs_improve_and_sort_options(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id, ids = two_tries["case_id"], two_tries["ids"]
    runs_path = f"/api/v1/cases/{case_id}/runs"
    older_id, newer_id = sorted(r["id"] for r in api.get(runs_path).json())
    data = _compare(api, case_id, base=newer_id, other=older_id).json()
    by_id = {q["query_id"]: q for q in data["queries"]}
    assert by_id[ids["star wars"]]["change"] == "improved"
    assert len(by_id[ids["star wars"]]["entered"]) == 5
    assert by_id[ids["alien"]]["change"] == "only_base"
    assert (data["counts"]["improved"], data["counts"]["only_base"]) == (1, 1)
    assert [q["query_id"] for q in data["queries"]][-2:] == [ids["batman"], ids["alien"]]

    by_text = _compare(api, case_id, base=newer_id, other=older_id, sort="text").json()
    assert [q["text"] for q in by_text["queries"]] == sorted([*QUERIES, "alien"])
    by_position = _compare(api, case_id, base=older_id, other=newer_id, sort="position").json()
    assert [q["text"] for q in by_position["queries"]] == [*QUERIES, "alien"]
    assert _compare(api, case_id, base=older_id, sort="score").status_code == 422


def test_a_run_compared_with_itself_is_unchanged(api: ApiUser, two_tries: dict[str, Any]) -> None:
    case_id = two_tries["case_id"]
    newer_id = max(r["id"] for r in api.get(f"/api/v1/cases/{case_id}/runs").json())
    data = _compare(api, case_id, base=newer_id, other=newer_id).json()
    scored = [q for q in data["queries"] if q["base_status"] == "scored"]
    assert len(scored) == 3 and all(q["delta"] == 0 for q in scored)
    assert data["counts"]["unchanged"] == 3 and data["case_score_delta"] == 0
    # The same queries on both sides: the headline and the case scores agree, nothing to explain.
    assert (data["headline_delta"], data["headline_change"]) == (0, "unchanged")
    assert data["sets_differ"] is None


def test_unknown_foreign_and_unfinished_runs(
    api: ApiUser,
    other_api: ApiUser,
    movies_engine: Any,
    session_factory: sessionmaker[Session],
) -> None:
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"])
    other_case = make_case(api, endpoint["id"], name="Other movies")
    add_queries(api, case["id"], ["batman"])
    add_queries(api, other_case["id"], ["batman"])
    mine, foreign = _run(api, case["id"])["id"], _run(api, other_case["id"])["id"]

    assert _compare(api, case["id"], base=mine).status_code == 200
    assert api.get(f"/api/v1/cases/{case['id']}/runs/{mine}").status_code == 200
    missing = _compare(api, case["id"], base=mine, other=999999)
    assert missing.status_code == 404 and "999999" in missing.json()["detail"]
    assert _compare(api, case["id"], base=999999, other=mine).status_code == 404
    assert _compare(api, case["id"], base=foreign, other=mine).status_code == 404
    assert _compare(api, case["id"], base=mine, other=foreign).status_code == 404
    assert _compare(api, case["id"], base=mine, other=-1).status_code == 404
    assert _compare(other_api, case["id"], base=mine).status_code == 404
    assert _compare(api, case["id"]).status_code == 422
    assert _compare(api, case["id"], base="abc").status_code == 422
    with session_scope(session_factory) as session:
        owned = session.get(Case, case["id"])
        assert owned is not None
        queued_id = run_service.create_run(session=session, case=owned).id
    unfinished = _compare(api, case["id"], base=mine, other=queued_id)
    assert unfinished.status_code == 409 and "queued" in unfinished.json()["detail"]


def test_a_weighted_case_compares_weighted_means(api: ApiUser, two_tries: dict[str, Any]) -> None:
    # With weighted_mean, the case scores, the headline delta and the tests are weighted
    # (API.md: "every mean (case, tag, compare) is weighted").
    case_id, ids, ratings = two_tries["case_id"], two_tries["ids"], two_tries["ratings"]
    weights = {qid: float(n + 1) ** 2 for n, qid in enumerate(sorted(ids.values()))}
    for qid, weight in weights.items():
        patch = api.patch(f"/api/v1/cases/{case_id}/queries/{qid}", json={"weight": weight})
        assert patch.status_code == 200, patch.text
    runs_path = f"/api/v1/cases/{case_id}/runs"
    older_id, newer_id = sorted(r["id"] for r in api.get(runs_path).json())
    base = _expected(api, api.get(f"{runs_path}/{older_id}").json(), ratings)
    other = _expected(api, api.get(f"{runs_path}/{newer_id}").json(), ratings)

    def weighted_mean(outcomes: dict[int, Outcome]) -> float:
        scored = {
            q: o.score for q, o in outcomes.items() if o.status == "scored" and o.score is not None
        }
        return sum(weights[q] * s for q, s in scored.items()) / sum(weights[q] for q in scored)

    plain = _compare(api, case_id, base=older_id, other=newer_id).json()
    assert (
        api.patch(f"/api/v1/cases/{case_id}", json={"aggregate": "weighted_mean"}).status_code
        == 200
    )
    data = _compare(api, case_id, base=older_id, other=newer_id).json()
    assert data["base"]["case_score"] == pytest.approx(weighted_mean(base), rel=1e-12)
    assert data["other"]["case_score"] == pytest.approx(weighted_mean(other), rel=1e-12)
    both = [q for q in data["queries"] if q["delta"] is not None]
    expected_delta = sum(weights[q["query_id"]] * q["delta"] for q in both) / sum(
        weights[q["query_id"]] for q in both
    )
    assert data["stats"]["mean_delta"] == pytest.approx(expected_delta, rel=1e-12)
    assert data["headline_delta"] == data["stats"]["mean_delta"]
    # The per-query numbers do not depend on the aggregate; the means do.
    assert [q["delta"] for q in data["queries"]] == [q["delta"] for q in plain["queries"]]
    assert data["stats"]["mean_delta"] != pytest.approx(plain["stats"]["mean_delta"])
