"""Shared test helpers (moved from tests/compare/test_compare_pages.py, which uses them too)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    movies_case,
    scorer_id,
)

XSS = "<script>alert('x')</script>"


def _two_runs(api: ApiUser, factory: sessionmaker[Session]) -> dict[str, Any]:
    """Two stored runs of a case: star wars drops, batman improves, alien and jaws in one."""
    ndcg = scorer_id(api, "NDCG@10")
    case_id = movies_case(api, scorer_id=ndcg)
    ids = add_queries(api, case_id, ["star wars", "batman", "alien", "jaws"])
    older = {
        ids["star wars"]: {"docs": [doc("1", "A New Hope", 1), doc("2", "Empire", 2)]},
        ids["batman"]: {"docs": [doc("4", "Batman Forever", 1)]},
        ids["alien"]: {"docs": [doc("6", "Alien", 1)]},
    }
    newer = {
        ids["star wars"]: {"docs": [doc("2", "Empire", 1), doc("9", "Spaceballs", 2)]},
        ids["batman"]: {"docs": [doc("5", XSS, 1), doc("4", "Batman Forever", 2)]},
        ids["jaws"]: {"docs": [doc("7", "Jaws", 1)]},
    }
    base = finished_run(factory, case_id, older, scorer=ndcg, case_score=11.0)
    other = finished_run(factory, case_id, newer, scorer=ndcg, case_score=22.0, try_number=1)
    ratings = {
        ids["star wars"]: {"1": 3, "2": 1},
        ids["batman"]: {"5": 3, "4": 1},
        ids["alien"]: {"6": 2},
        ids["jaws"]: {"7": 3, "8": 3},  # 8 is never returned: jaws scores below 100
    }
    for query_id, query_ratings in ratings.items():
        body = {"ratings": [{"doc_id": k, "rating": v} for k, v in query_ratings.items()]}
        put = api.put(f"/api/v1/cases/{case_id}/queries/{query_id}/ratings", json=body)
        assert put.status_code == 200, put.text
    return {"case_id": case_id, "ids": ids, "base": base, "other": other}
