"""Shared test helpers (moved from tests/compare/test_compare_api.py, which uses them too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id

QUERIES = ["star wars", "star trek", "batman"]


def _run(api: ApiUser, case_id: int) -> dict[str, Any]:
    response = api.post(f"/api/v1/cases/{case_id}/runs?wait=true")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _rate(api: ApiUser, case_id: int, query_id: int, ratings: Mapping[str, float]) -> None:
    body = {"ratings": [{"doc_id": k, "rating": v} for k, v in ratings.items()]}
    response = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
    assert response.status_code == 200, response.text


def _compare(api: ApiUser, case_id: int, **params: Any) -> Any:
    return api.get(f"/api/v1/cases/{case_id}/runs/compare", params=params)


def _docs(run: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    return {q["query_id"]: q["docs"] for q in run["queries"]}


@pytest.fixture
def two_tries(api: ApiUser, movies_engine: Any) -> dict[str, Any]:
    """Try 1 (10 rows) and try 2 (5 rows, one more query), both run, then rated."""
    endpoint = make_endpoint(api, movies_engine.index_url)
    case = make_case(api, endpoint["id"], scorer_id=scorer_id(api, "NDCG@10"))
    ids = add_queries(api, case["id"], QUERIES)
    first = _run(api, case["id"])
    patched = api.patch(f"/api/v1/cases/{case['id']}", json={"rows": 5})
    assert patched.json()["try_number"] == 2
    ids |= add_queries(api, case["id"], ["alien"])
    second = _run(api, case["id"])
    assert (first["try_number"], second["try_number"]) == (1, 2)
    wars = [d["id"] for d in _docs(first)[ids["star wars"]]]
    trek = [d["id"] for d in _docs(first)[ids["star trek"]]]
    alien = [d["id"] for d in _docs(second)[ids["alien"]]]
    ratings = {
        ids["star wars"]: {wars[0]: 3, wars[1]: 1, wars[6]: 3},  # wars[6] is beyond 5 rows
        ids["star trek"]: {trek[0]: 2},
        ids["batman"]: {},
        ids["alien"]: {alien[0]: 3},
    }
    for query_id, query_ratings in ratings.items():
        if query_ratings:
            _rate(api, case["id"], query_id, query_ratings)
    return {"case_id": case["id"], "ids": ids, "ratings": ratings}
