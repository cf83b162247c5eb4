"""Shared test helpers (moved from tests/cases/test_rating.py, which uses them too)."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    movies_case,
    scorer_id,
)


def _case_with_results(api: ApiUser, factory: sessionmaker[Session]) -> tuple[int, int]:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "batman"])
    docs = [
        doc(str(n), f"Movie {n}", n, director="Lucas", poster=f"https://img.example/{n}.jpg")
        for n in range(1, 4)
    ]
    finished_run(
        factory,
        case_id,
        {
            ids["star wars"]: {"status": "unscored", "docs": docs},
            ids["batman"]: {"status": "unscored", "docs": []},
        },
        scorer=scorer_id(api, "Classic"),
    )
    return case_id, ids["star wars"]
