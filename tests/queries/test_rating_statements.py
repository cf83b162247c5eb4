"""How many SQL statements one htmx rating costs, counted with an engine event listener."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from tests.fixtures.users import ApiUser
from tests.support.pages import login, one, soup
from tests.support.rating import _case_with_results

# The test's savepoints are the fixture's doing, not the request's.
FIXTURE_STATEMENTS = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")
# Sign-in: the session with its user (1); the case with its scorer, the query (2); the
# write: the ratings with their raters' emails, the insert (2); re-scoring: the latest run
# locked (1), then read with the query's row and the run's try (1), the ratings read under
# the lock (1), the row update, the run's totals updated and returned (2). It was 21 before
# the rate() service, 16 with it at first, 8 before the lock that keeps concurrent ratings
# from losing an update.
BUDGET = 10


def test_an_htmx_rating_stays_within_its_statement_budget(
    api: ApiUser, client: TestClient, session_factory: sessionmaker[Session], app: FastAPI
) -> None:
    case_id, query_id = _case_with_results(api, session_factory)
    token = login(client)
    url = f"/cases/{case_id}/queries/{query_id}/ratings"
    headers = {"HX-Request": "true", "X-CSRF-Token": token}
    assert client.post(url, data={"doc_id": "1", "rating": "5"}, headers=headers).is_success
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not statement.lstrip().upper().startswith(FIXTURE_STATEMENTS):
            statements.append(statement)

    event.listen(app.state.engine, "before_cursor_execute", count)
    try:
        response = client.post(url, data={"doc_id": "2", "rating": "7"}, headers=headers)
    finally:
        event.remove(app.state.engine, "before_cursor_execute", count)
    assert response.status_code == 200
    rated = soup(response).select(".doc")[1]
    assert one(rated, "button[aria-pressed=true]").get_text() == "7"
    assert 0 < len(statements) <= BUDGET, "\n".join(statements)
