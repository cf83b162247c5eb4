"""Builders for page tests: log in through the real form, make cases and finished runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bs4 import BeautifulSoup, Tag
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case, Run, RunQuery
from tests.fixtures.users import PASSWORD, ApiUser
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id

__all__ = ["add_queries", "finished_run", "login", "make_case", "make_endpoint", "scorer_id"]


def soup(response: Any) -> BeautifulSoup:
    """Return the parsed HTML of a response."""
    return BeautifulSoup(response.text, "html.parser")


def one(page: BeautifulSoup | Tag, selector: str) -> Tag:
    """Return the one element matching a selector (failing when there is none)."""
    found = page.select_one(selector)
    assert found is not None, f"no element matches {selector!r}"
    return found


def attr(tag: Tag, name: str) -> str:
    """Return a single-valued attribute of an element as text (failing when it is missing)."""
    value = tag.get(name)
    assert isinstance(value, str), f"{name!r} is {value!r}, not one string"
    return value


def template_context(response: Any) -> dict[str, Any]:
    """The context a page was rendered with (the test client keeps it on the response)."""
    context: dict[str, Any] = response.context
    return context


def login(client: TestClient, email: str = "alice@example.com") -> str:
    """Log in through the /login form; return the session's CSRF token."""
    token = one(soup(client.get("/login")), "input[name=csrf_token]")["value"]
    response = client.post(
        "/login",
        data={"email": email, "password": PASSWORD, "csrf_token": str(token), "next": "/"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    # Logging in starts a new session, with a new token: read it from a page.
    fresh = one(soup(client.get("/account")), "input[name=csrf_token]")["value"]
    return str(fresh)


def movies_case(api: ApiUser, url: str = "http://127.0.0.1:9/movies", **extra: Any) -> int:
    """Create an endpoint and a case on it; return the case id."""
    endpoint = make_endpoint(api, url)
    return int(make_case(api, endpoint["id"], **extra)["id"])


def doc(doc_id: str, title: str, rank: int, **fields: Any) -> dict[str, Any]:
    """Return a stored run doc."""
    return {"id": doc_id, "rank": rank, "fields": {"title": title, **fields}}


def finished_run(
    factory: sessionmaker[Session],
    case_id: int,
    outcomes: dict[int, dict[str, Any]],
    *,
    scorer: int,
    case_score: float | None = None,
    try_number: int = 1,
) -> int:
    """Store a finished run with the given per-query outcomes; return its id.

    Each outcome may give status, score, num_found, docs, error and position.
    """
    now = datetime.now(UTC)
    with session_scope(factory) as session:
        statuses = [o.get("status", "scored") for o in outcomes.values()]
        run = Run(
            case_id=case_id,
            try_number=try_number,
            scorer_id=scorer,
            status="finished",
            case_score=case_score,
            recorded_score=case_score,
            recorded_scorer_id=scorer,
            # As a run finishing records it: the case's aggregate at that moment.
            recorded_aggregate=session.scalar(select(Case.aggregate).where(Case.id == case_id)),
            total=len(outcomes),
            done=len(outcomes),
            scored=statuses.count("scored"),
            unscored=statuses.count("unscored"),
            errors=statuses.count("error"),
            started_at=now - timedelta(seconds=2),
            finished_at=now,
        )
        session.add(run)
        session.flush()
        for position, (query_id, outcome) in enumerate(outcomes.items()):
            session.add(
                RunQuery(
                    run_id=run.id,
                    query_id=query_id,
                    text=outcome.get("text", f"q{query_id}"),
                    position=outcome.get("position", position),
                    status=outcome.get("status", "scored"),
                    score=outcome.get("score"),
                    raw_score=outcome.get("score"),
                    error=outcome.get("error"),
                    num_found=outcome.get("num_found", len(outcome.get("docs", []))),
                    docs=outcome.get("docs", []),
                    log=[],
                )
            )
        session.commit()
        return run.id
