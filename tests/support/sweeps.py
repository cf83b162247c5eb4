"""Shared test helpers (moved from tests/sweeps/test_sweeps.py, which uses them too)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint, scorer_id

TEMPLATE = (
    '{"query": {"bool": {"must": [{"match": {"title": {"query": "#$query##", "boost": ##t##}}}], '
    '"should": [{"term": {"genre": {"value": "Comedy", "boost": ##g##}}}]}}}'
)


QUERIES = ["love", "man", "night"]


@pytest.fixture
def rated_case(api: ApiUser, movies_engine: Any) -> dict[str, Any]:
    """A case with two knobs whose queries have some docs rated."""
    endpoint = make_endpoint(api, movies_engine.index_url)
    ndcg = scorer_id(api, "NDCG@10")
    case = make_case(
        api, endpoint["id"], query_template=TEMPLATE, knobs={"t": 1, "g": 0}, scorer_id=ndcg
    )
    api.post(f"/api/v1/cases/{case['id']}/queries/bulk", json={"queries": QUERIES})
    run = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
    for q in run["queries"]:
        ratings = [{"doc_id": d["id"], "rating": 3 - i % 4} for i, d in enumerate(q["docs"][:8])]
        path = f"/api/v1/cases/{case['id']}/queries/{q['query_id']}/ratings"
        assert api.put(path, json={"ratings": ratings}).status_code == 200
    return case
