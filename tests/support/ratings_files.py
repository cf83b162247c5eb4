"""Shared test helpers (moved from tests/interop/test_ratings_io.py, which uses them too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint, scorer_id


def _case(api: ApiUser, scorer: str = "NDCG@10") -> int:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    return int(make_case(api, endpoint["id"], scorer_id=scorer_id(api, scorer))["id"])


def _rate(api: ApiUser, case_id: int, query_id: int, ratings: Mapping[str, float]) -> None:
    body = {"ratings": [{"doc_id": d, "rating": r} for d, r in ratings.items()]}
    response = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
    assert response.status_code == 200, response.text


def _export(api: ApiUser, case_id: int, fmt: str) -> Any:
    response = api.get(f"/api/v1/cases/{case_id}/ratings/export", params={"format": fmt})
    assert response.status_code == 200, response.text
    return response
