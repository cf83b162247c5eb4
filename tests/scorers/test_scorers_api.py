"""Scorer routes and stateless scoring."""

from __future__ import annotations

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint

PRESET_NAMES = ["Classic", "NDCG@10", "DCG@10", "CG@10", "P@10", "AP@10", "RR@10", "ERR@10"]
DATA_X = {"docs": ["a", "b", "c", "d", "e"], "ratings": {"a": 2, "c": 3, "d": 0, "e": 1, "x": 3}}


def test_presets_are_listed_once(api: ApiUser) -> None:
    scorers = api.get("/api/v1/scorers").json()
    assert [s["name"] for s in scorers] == PRESET_NAMES
    ndcg = scorers[1]
    assert ndcg["kind"] == "ndcg" and ndcg["builtin"] is True
    assert ndcg["scale"] == [0, 1, 2, 3]
    assert ndcg["scale_labels"] == {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"}
    assert ndcg["params"]["k"] == 10 and ndcg["params"]["gain"] == "linear"


def test_score_with_a_preset_and_with_an_inline_scorer(api: ApiUser) -> None:
    ndcg_id = next(s["id"] for s in api.get("/api/v1/scorers").json() if s["name"] == "NDCG@10")
    by_id = api.post("/api/v1/score", json={"scorer_id": ndcg_id, **DATA_X}).json()
    assert by_id["status"] == "scored"
    assert by_id["score"] == pytest.approx(61.4671, abs=5e-5)
    inline = api.post(
        "/api/v1/score",
        json={
            "scorer": {
                "name": "e",
                "kind": "ndcg",
                "scale": [0, 1, 2, 3],
                "params": {"gain": "exponential"},
            },
            **DATA_X,
        },
    ).json()
    assert inline["score"] == pytest.approx(51.5978, abs=5e-5)
    js = api.post(
        "/api/v1/score",
        json={
            "scorer": {
                "name": "js",
                "kind": "javascript",
                "scale": [0, 1, 2, 3],
                "max_score": 1,
                "code": "console.log('n', numReturned()); setScore(docRating(0) / max);",
            },
            **DATA_X,
        },
    ).json()
    assert js["score"] == pytest.approx(100 * 2 / 3) and js["log"] == ["n 5"]
    none = api.post("/api/v1/score", json={"scorer_id": ndcg_id, "docs": ["a"], "ratings": {}})
    assert none.json()["status"] == "unscored" and none.json()["reason"] == "no ratings"


def test_score_needs_exactly_one_scorer(api: ApiUser) -> None:
    response = api.post("/api/v1/score", json={"docs": [], "ratings": {}})
    assert response.status_code == 422


def test_javascript_syntax_errors_are_refused_with_their_line(api: ApiUser) -> None:
    response = api.post(
        "/api/v1/scorers",
        json={
            "name": "broken",
            "kind": "javascript",
            "scale": [0, 1],
            "code": "var a = 1;\nvar b = ;\nsetScore(a);",
        },
    )
    assert response.status_code == 422
    error = response.json()["detail"][0]
    assert error["loc"] == ["body", "code"]
    assert "line 2" in error["msg"]


def test_scale_rules(api: ApiUser) -> None:
    for scale, labels in [
        ([3, 2, 1], None),
        ([1, 1, 2], None),
        (list(range(12)), None),
        ([0, 1], {"2": "Great"}),
    ]:
        response = api.post(
            "/api/v1/scorers",
            json={"name": "s", "kind": "ndcg", "scale": scale, "scale_labels": labels},
        )
        assert response.status_code == 422, (scale, labels)


def test_own_scorers_crud_and_presets_read_only(api: ApiUser, other_api: ApiUser) -> None:
    created = api.post(
        "/api/v1/scorers",
        json={
            "name": "NDCG@5 exp",
            "kind": "ndcg",
            "scale": [0, 1, 2, 3],
            "params": {"k": 5, "gain": "exponential"},
            "scale_labels": {"0": "Bad", "3": "Great"},
        },
    )
    assert created.status_code == 201
    scorer = created.json()
    assert scorer["params"] == {"k": 5, "gain": "exponential", "ideal": "rated", "unrated": "zero"}
    path = f"/api/v1/scorers/{scorer['id']}"
    assert api.patch(path, json={"params": {"k": 7}}).json()["params"]["k"] == 7
    assert other_api.get(path).status_code == 404
    assert other_api.delete(path).status_code == 404
    preset_id = api.get("/api/v1/scorers").json()[0]["id"]
    assert api.patch(f"/api/v1/scorers/{preset_id}", json={"name": "mine"}).status_code == 409
    assert api.delete(f"/api/v1/scorers/{preset_id}").status_code == 409
    shared = api.patch(f"/api/v1/scorers/{preset_id}", json={"team_ids": []})
    assert shared.status_code == 409 and "shared with everyone" in shared.json()["detail"]
    case = make_case(api, make_endpoint(api, "http://127.0.0.1:9/m")["id"], scorer_id=scorer["id"])
    assert api.delete(path).status_code == 409
    api.delete(f"/api/v1/cases/{case['id']}")
    assert api.delete(path).status_code == 204


def test_stateless_ratings_outside_the_scale_are_422(api: ApiUser) -> None:
    response = api.post(
        "/api/v1/score",
        json={
            "scorer": {"name": "n", "kind": "ndcg", "scale": [0, 1, 2, 3]},
            "docs": ["a"],
            "ratings": {"a": 7},
        },
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "ratings", "a"]


def test_javascript_scorers_run_in_the_quepid_environment_when_asked(api: ApiUser) -> None:
    body = {
        "name": "Quepid distance",
        "kind": "javascript",
        "scale": [0, 1, 2, 3],
        "code": "setScore(editDistanceFromBest() * 10 + query.query_text.length)",
        "environment": "quepid",
    }
    created = api.post("/api/v1/scorers", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["environment"] == "quepid"
    scorer_id = created.json()["id"]
    assert api.get(f"/api/v1/scorers/{scorer_id}").json()["environment"] == "quepid"
    scored = api.post(
        "/api/v1/score", json={"scorer_id": scorer_id, "query_text": "ab", **DATA_X}
    ).json()
    assert scored["score"] == 32  # Quepid's table gives 3 on data X (true Levenshtein: 4)
    relevo = api.patch(f"/api/v1/scorers/{scorer_id}", json={"environment": "relevo"})
    assert relevo.status_code == 200 and relevo.json()["environment"] == "relevo"
    scored = api.post(
        "/api/v1/score", json={"scorer_id": scorer_id, "query_text": "ab", **DATA_X}
    ).json()
    assert scored["score"] == 42
    builtin = {"name": "n", "kind": "ndcg", "scale": [0, 1, 2, 3], "environment": "quepid"}
    refused = api.post("/api/v1/scorers", json=builtin)
    assert refused.status_code == 422 and "environment" in refused.text
    unknown = api.post("/api/v1/scorers", json={**body, "environment": "angular"})
    assert unknown.status_code == 422
