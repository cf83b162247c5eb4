"""A run in which every query errored shows as failed, and errored queries show their error."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import (
    add_queries,
    doc,
    finished_run,
    login,
    movies_case,
    one,
    scorer_id,
    soup,
)


def test_a_run_where_every_query_errored_is_shown_failed_with_the_errors(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "alien"])
    outcomes = {
        qid: {"status": "error", "error": f"connection refused {n}", "num_found": None}
        for n, qid in enumerate(ids.values())
    }
    run_id = finished_run(session_factory, case_id, outcomes, scorer=scorer_id(api, "Classic"))
    login(client)
    progress = soup(client.get(f"/cases/{case_id}/runs/{run_id}/progress"))
    assert one(progress, "#run-progress")["data-status"] == "failed"
    assert "every query errored" in one(progress, ".run-status").get_text()
    page = soup(client.get(f"/cases/{case_id}"))
    status = one(page, "#runs tbody tr td.status")
    assert status.get_text() == "failed"
    assert "status-failed" in status["class"]
    for n, qid in enumerate(ids.values()):
        assert one(page, f"#query-error-{qid}").get_text() == f"connection refused {n}"
        assert page.select_one(f"#query-unrated-{qid}") is None
    listing = api.get(f"/api/v1/pages/cases/{case_id}/query-list").json()
    assert [q["unrated_top_k"] for q in listing["items"]] == [None, None]


def test_a_run_with_some_errors_stays_finished_and_keeps_unrated_counts(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    case_id = movies_case(api)
    ids = add_queries(api, case_id, ["star wars", "alien"])
    outcomes: dict[int, dict[str, Any]] = {
        ids["star wars"]: {"score": 50.0, "docs": [doc("1", "A New Hope", 1)]},
        ids["alien"]: {"status": "error", "error": "timed out", "num_found": None},
    }
    finished_run(session_factory, case_id, outcomes, scorer=scorer_id(api, "Classic"))
    login(client)
    page = soup(client.get(f"/cases/{case_id}"))
    assert one(page, "#runs tbody tr td.status").get_text() == "finished"
    assert one(page, f"#query-unrated-{ids['star wars']}").get_text(strip=True) == "1 unrated"
    assert one(page, f"#query-error-{ids['alien']}").get_text() == "timed out"
