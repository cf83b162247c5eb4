"""Small builders for API tests."""

from __future__ import annotations

from typing import Any

from tests.fixtures.users import ApiUser

MOVIES_TEMPLATE = (
    '{"query": {"multi_match": {"query": "#$query##", '
    '"fields": ["title^##titleBoost##", "director"]}}}'
)
FIELD_SPEC = "id:_id title:title director genre"


def make_endpoint(api: ApiUser, url: str, **extra: Any) -> dict[str, Any]:
    body = {"name": "movies", "engine": "opensearch", "url": url, **extra}
    response = api.post("/api/v1/search-endpoints", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def scorer_id(api: ApiUser, name: str) -> int:
    return int(next(s["id"] for s in api.get("/api/v1/scorers").json() if s["name"] == name))


def make_case(api: ApiUser, endpoint_id: int, **extra: Any) -> dict[str, Any]:
    body = {
        "name": "Movies",
        "search_endpoint_id": endpoint_id,
        "query_template": MOVIES_TEMPLATE,
        "field_spec": FIELD_SPEC,
        **extra,
    }
    response = api.post("/api/v1/cases", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def add_queries(api: ApiUser, case_id: int, texts: list[str]) -> dict[str, int]:
    response = api.post(f"/api/v1/cases/{case_id}/queries/bulk", json={"queries": texts})
    assert response.status_code == 200, response.text
    return {q["text"]: q["id"] for q in response.json()["queries"]}
