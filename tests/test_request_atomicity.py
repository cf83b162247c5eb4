"""Every mutating route runs in one transaction: made to fail right after its first write
(an INSERT, UPDATE or DELETE of one of the app's tables reached the database), a request
leaves every table as it was.

The routes are enumerated from the built app, so a new route fails here until it is given a
request below (ROUTES) or a written reason (SKIPPED).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import event, select
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Base, JudgeRun, Run, Sweep, User
from app.runs.manager import RunManager
from tests.fixtures.users import PASSWORD, ApiUser, make_api_user
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.api import add_queries, make_case, make_endpoint, scorer_id
from tests.support.atomicity import (
    QUEPID_BOOK,
    RATINGS_CSV,
    TREC_RUN,
    add_click_events,
    add_judge_failure,
    add_model_judge,
)
from tests.support.clicks import ndjson, ubi_event
from tests.support.pages import finished_run, login, one, soup
from tests.support.quepid import fixture as quepid_fixture

URL = "http://127.0.0.1:9/movies"
WRITES = ("INSERT", "UPDATE", "DELETE")
JS = {"kind": "javascript", "code": "setScore(1)", "scale": [0, 1, 2, 3]}
JUDGE = {
    "name": "judge",
    "provider": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "gpt-fake",
    "api_key": "sk-secret",
}


EVENTS = ndjson([ubi_event("q1", "shoes", "d1", 1, "impression")])
QUEPID_CASE = json.dumps(quepid_fixture("movies_es_case.json"))


class InjectedFailure(Exception):
    """Raised by the test right after a request's first write."""


@dataclass
class Call:
    """One request: JSON for the API, a form (with the CSRF token added) for pages."""

    json: Any = None
    form: dict[str, str] | None = None
    writes: bool = True  # whether it must reach a write (else the route refused first)
    path: dict[str, str] = field(default_factory=dict)  # a parameter filled by another id
    page: str | None = None  # a page whose form (the one posting to the route) is sent back
    selector: str | None = None  # that form, when its action does not end with the path
    content: str | None = None  # a raw body (an upload), sent with content_type
    content_type: str = "text/csv"
    upload: tuple[str, str] | None = None  # a file (name, text) the form sends as "file"


# {method path}: the request made, its path parameters filled from the world (W).
ROUTES: dict[str, Call] = {
    "POST /api/v1/api-keys": Call(json={"name": "more"}),
    "DELETE /api/v1/api-keys/{key_id}": Call(),
    "PATCH /api/v1/api-keys/{key_id}": Call(json={"scopes": ["read"]}),
    "POST /api/v1/search-endpoints": Call(json={"name": "e2", "engine": "opensearch", "url": URL}),
    "PATCH /api/v1/search-endpoints/{endpoint_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/search-endpoints/{endpoint_id}": Call(
        path={"endpoint_id": "spare_endpoint_id"}
    ),
    "POST /api/v1/scorers": Call(json={"name": "mine 2", **JS}),
    "PATCH /api/v1/scorers/{scorer_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/scorers/{scorer_id}": Call(),
    "POST /api/v1/cases": Call(
        json={"name": "c2", "search_endpoint_id": "{endpoint_id}", "query_template": "{}"}
    ),
    "PATCH /api/v1/cases/{case_id}": Call(json={"name": "Renamed"}),
    "DELETE /api/v1/cases/{case_id}": Call(),
    "POST /api/v1/cases/{case_id}/queries": Call(json={"text": "new query"}),
    "POST /api/v1/cases/{case_id}/queries/bulk": Call(json={"queries": ["n1", "n2"]}),
    "PATCH /api/v1/cases/{case_id}/queries/{query_id}": Call(json={"text": "changed"}),
    "DELETE /api/v1/cases/{case_id}/queries/{query_id}": Call(),
    "PUT /api/v1/cases/{case_id}/queries/{query_id}/ratings": Call(
        json={"ratings": [{"doc_id": "d9", "rating": 3}]}
    ),
    "POST /api/v1/cases/{case_id}/runs": Call(json={}),
    "POST /api/v1/cases/{case_id}/runs/{run_id}/rescore": Call(),
    "POST /api/v1/books": Call(json={"name": "B2", "scale": [0, 1]}),
    "PATCH /api/v1/books/{book_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/books/{book_id}": Call(),
    "POST /api/v1/teams": Call(json={"name": "Other team"}),
    "PATCH /api/v1/teams/{team_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/teams/{team_id}": Call(),
    "PUT /api/v1/cases/{case_id}/schedule": Call(json={"cron": "@hourly"}),
    "DELETE /api/v1/cases/{case_id}/schedule": Call(),
    "POST /api/v1/cases/{case_id}/alerts": Call(json={"kind": "below", "threshold": 40}),
    "PATCH /api/v1/cases/{case_id}/alerts/{alert_id}": Call(json={"threshold": 30}),
    "DELETE /api/v1/cases/{case_id}/alerts/{alert_id}": Call(),
    "POST /api/v1/webhooks": Call(json={"name": "ops 2", "url": "http://127.0.0.1:9/h2"}),
    "PATCH /api/v1/webhooks/{webhook_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/webhooks/{webhook_id}": Call(),
    "POST /api/v1/cases/{case_id}/annotations": Call(json={"text": "reindexed"}),
    "PATCH /api/v1/cases/{case_id}/annotations/{annotation_id}": Call(json={"text": "changed"}),
    "DELETE /api/v1/cases/{case_id}/annotations/{annotation_id}": Call(),
    "POST /api/v1/click-logs": Call(json={"name": "shop 2"}),
    "PATCH /api/v1/click-logs/{click_log_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/click-logs/{click_log_id}": Call(),
    "POST /api/v1/cases/{case_id}/runs/{run_id}/cancel": Call(path={"run_id": "queued_run_id"}),
    "PATCH /api/v1/cases/{case_id}/queries": Call(json={"query_ids": ["{query_id}"], "weight": 2}),
    "POST /api/v1/books/{book_id}/pairs": Call(
        json={"pairs": [{"query_text": "q", "doc_id": "d2", "fields": {"title": "T"}}]}
    ),
    "POST /api/v1/judges": Call(json={**JUDGE, "name": "judge 2"}),
    "PATCH /api/v1/judges/{judge_id}": Call(json={"name": "renamed"}),
    "DELETE /api/v1/judges/{judge_id}": Call(),
    "PUT /api/v1/teams/{team_id}/members": Call(json={"email": "dave@example.com"}),
    "DELETE /api/v1/teams/{team_id}/members/{user_id}": Call(),
    "POST /api/v1/admin/users": Call(json={"email": "carol@example.com", "password": PASSWORD}),
    "PATCH /api/v1/admin/users/{user_id}": Call(json={"is_disabled": True}),
    "POST /account/api-keys": Call(form={"name": "page key"}),
    "POST /cases/{case_id}/queries": Call(form={"queries": "new one\nnew two"}),
    "POST /cases/{case_id}/runs": Call(form={}),
    "POST /cases/{case_id}/runs/{run_id}/cancel": Call(form={}, path={"run_id": "queued_run_id"}),
    "POST /cases/{case_id}/schedule": Call(form={"cron": "@hourly"}),
    "POST /cases/{case_id}/alerts": Call(form={"kind": "below", "threshold": "40"}),
    "POST /webhooks": Call(form={"name": "ops 2", "url": "http://127.0.0.1:9/h2"}),
    "POST /teams": Call(form={"name": "Relevance"}),
    "POST /teams/{team_id}/members": Call(form={"email": "dave@example.com", "role": "member"}),
    "POST /teams/{team_id}/members/{member_id}/remove": Call(
        form={}, path={"member_id": "user_id"}
    ),
    "POST /sharing/{kind}/{object_id}": Call(
        form={"team_id": "{team_id}"}, path={"object_id": "book_id"}
    ),
    "POST /judges/{judge_id}/delete": Call(form={}),
    "POST /account/password": Call(
        form={"current_password": PASSWORD, "new_password": "a much longer passphrase"}
    ),
    "POST /cases/{case_id}/metrics": Call(form={"aggregate": "weighted_mean"}),
    "POST /cases/{case_id}/queries/tags": Call(
        form={"query_ids": "{query_id}", "add_tags": "head"}
    ),
    "POST /cases/{case_id}/queries/{query_id}/notes": Call(
        form={"notes": "n", "information_need": "i"}
    ),
    "POST /cases/{case_id}/queries/{query_id}/ratings": Call(form={"doc_id": "d9", "rating": "3"}),
    "POST /books": Call(form={"name": "B2", "scale": "0,1"}),
    "POST /cases/{case_id}/settings": Call(
        page="/cases/{case_id}", selector="#settings-form", form={"name": "Renamed"}
    ),
    "POST /endpoints/{endpoint_id}": Call(
        page="/endpoints/{endpoint_id}", form={"name": "renamed"}
    ),
    "POST /scorers/{scorer_id}": Call(
        page="/scorers/{scorer_id}", form={"name": "renamed", "action": "save"}
    ),
    "POST /judges/{judge_id}": Call(page="/judges/{judge_id}", form={"name": "renamed"}),
    "POST /admin/users/{user_id}": Call(page="/admin/users", form={"action": "disable"}),
    "POST /scorers": Call(
        page="/scorers/new", form={"name": "mine 2", "code": "setScore(1)", "action": "save"}
    ),
    "POST /judges": Call(page="/judges", form={**JUDGE, "name": "judge 2"}),
    "POST /admin/users": Call(
        page="/admin/users", form={"email": "carol@example.com", "password": PASSWORD}
    ),
    "POST /api/v1/cases/{case_id}/ratings/import": Call(
        content="query,docid,rating\nstar wars,d7,2\nnew text,d8,1\n"
    ),
    "POST /api/v1/click-logs/{click_log_id}/events": Call(
        content=EVENTS, content_type="application/x-ndjson"
    ),
    "POST /api/v1/cases/import": Call(content=QUEPID_CASE, content_type="application/json"),
    "POST /api/v1/cases/{case_id}/sweeps": Call(json={"knobs": {"titleBoost": [1, 2]}}),
    "POST /api/v1/cases/{case_id}/sweeps/{sweep_id}/cancel": Call(),
    "POST /api/v1/cases/{case_id}/sweeps/{sweep_id}/apply": Call(json={"run_id": "{swept_run_id}"}),
    "POST /cases/{case_id}/sweeps/{sweep_id}/cancel": Call(form={}),
    "POST /cases/{case_id}/sweeps/{sweep_id}/apply": Call(form={"run_id": "{swept_run_id}"}),
    "PUT /api/v1/books/{book_id}/pairs/{pair_id}/judgement": Call(json={"rating": 0}),
    "POST /api/v1/cases/{case_id}/books/{book_id}/sync": Call(json={"method": "mean"}),
    "POST /api/v1/books/{book_id}/populate": Call(json={"case_id": "{case_id}", "depth": 2}),
    "POST /books/{book_id}/populate": Call(form={"case_id": "{case_id}", "depth": "2"}),
    "POST /books/{book_id}/sync": Call(form={"case_id": "{case_id}", "method": "mean"}),
    "POST /api/v1/books/{book_id}/judge-runs": Call(
        json={"judge_id": "{judge_id}", "pairs": "all"}
    ),
    # The request only records the pull (queued); its job stores each page as it goes,
    # committed page by page so a long pull resumes (tests/clicks/test_pull.py).
    "POST /api/v1/click-logs/{click_log_id}/pull": Call(
        json={"search_endpoint_id": "{endpoint_id}"}
    ),
    "POST /click-logs/{click_log_id}/pull": Call(form={"search_endpoint_id": "{endpoint_id}"}),
    "POST /api/v1/books/{book_id}/judge-runs/{run_id}/cancel": Call(
        path={"run_id": "judge_run_id"}
    ),
    "POST /api/v1/books/{book_id}/judge-runs/{run_id}/resume": Call(
        path={"run_id": "judge_run_id"}
    ),
    "POST /books/{book_id}/judge-runs/{run_id}/cancel": Call(
        form={}, path={"run_id": "judge_run_id"}
    ),
    "POST /books/{book_id}/judge-runs/{run_id}/resume": Call(
        form={}, path={"run_id": "judge_run_id"}
    ),
    "POST /api/v1/click-logs/{click_log_id}/queries": Call(
        json=[{"query_id": "x1", "user_query": "boots"}]
    ),
    "POST /api/v1/cases/{case_id}/queries/from-log": Call(
        json={"click_log_id": "{click_log_id}", "design": "uniform", "size": 1, "seed": 5}
    ),
    "PUT /api/v1/search-endpoints/{endpoint_id}/results": Call(
        content="q1 Q0 d1 1 2.5 run\n",
        content_type="text/plain",
        path={"endpoint_id": "static_endpoint_id"},
    ),
    # Pages: forms whose only field is the CSRF token.
    "POST /logout": Call(form={}),
    "POST /account/api-keys/{key_id}/revoke": Call(form={}),
    "POST /account/api-keys/{key_id}/scopes": Call(form={"scopes": "read"}),
    "POST /cases/{case_id}/delete": Call(form={}),
    "POST /cases/{case_id}/queries/{query_id}/delete": Call(form={}),
    "POST /cases/{case_id}/alerts/{alert_id}/delete": Call(form={}),
    "POST /cases/{case_id}/annotations": Call(form={"text": "reindexed"}),
    "POST /webhooks/{webhook_id}/delete": Call(form={}),
    "POST /scorers/{scorer_id}/delete": Call(form={}),
    "POST /endpoints/{endpoint_id}/delete": Call(
        form={}, path={"endpoint_id": "spare_endpoint_id"}
    ),
    "POST /books/{book_id}/delete": Call(form={}),
    # Uploads: a Quepid case or book, a ratings file, a result file.
    "POST /api/v1/books/import": Call(json=json.loads(QUEPID_BOOK)),
    "POST /books/import": Call(form={}, upload=("book.json", QUEPID_BOOK)),
    "POST /cases/import": Call(form={}, upload=("case.json", QUEPID_CASE)),
    "POST /cases/{case_id}/ratings/import": Call(
        form={"format": "csv", "action": "import"}, upload=("ratings.csv", RATINGS_CSV)
    ),
    "POST /endpoints/{endpoint_id}/results": Call(
        form={"format": "trec"},
        upload=("run.txt", TREC_RUN),
        path={"endpoint_id": "static_endpoint_id"},
    ),
    # Page forms, sent as the page shows them with the fields a user fills in.
    "POST /cases": Call(page="/", selector="#new-case-form", form={"name": "c2"}),
    "POST /endpoints": Call(
        page="/endpoints/new",
        selector="#endpoint-form",
        form={"name": "e2", "engine": "opensearch", "url": URL},
    ),
    "POST /cases/{case_id}/sweeps": Call(
        page="/cases/{case_id}", selector="#sweep-form", form={"sweep.titleBoost": "1, 2"}
    ),
    # Judging: a rater's rating, a judge run started or retried, a judge tried on pairs.
    "POST /books/{book_id}/judge": Call(
        page="/books/{book_id}/judge?pair_id={pair_id}",
        selector="#judge-form",
        form={"rating": "0"},
    ),
    "POST /books/{book_id}/judging": Call(
        page="/books/{book_id}/judging",
        selector="#judge-run-form",
        form={"judge_id": "{judge_id}", "pairs": "all", "action": "start"},
    ),
    "POST /books/{book_id}/judge-runs/{run_id}/retry": Call(
        form={}, path={"run_id": "judge_run_id"}
    ),
    "POST /judges/{judge_id}/test": Call(
        form={"book_id": "{book_id}", "n": "1"}, path={"judge_id": "model_judge_id"}
    ),
    # Click logs: a click model's judgements into the book, a sample added to the case.
    "POST /api/v1/click-logs/{click_log_id}/judgements": Call(
        json={"book_id": "{book_id}", "model": "coec", "min_impressions": 1}
    ),
    "POST /click-logs/{click_log_id}/judgements": Call(
        page="/click-logs/{click_log_id}", selector="#judge-form", form={"min_impressions": "1"}
    ),
    "POST /click-logs/{click_log_id}/sample": Call(
        page="/click-logs/{click_log_id}?design=uniform&size=1&seed=5", selector="#sample-add-form"
    ),
}

# {method path}: why the route is not exercised here.
SKIPPED: dict[str, str] = {
    "POST /login": "a failed login writes nothing; a successful one only starts a session",
    "POST /api/v1/score": "scores a posted ranking: it writes nothing",
    "POST /api/v1/search-endpoints/{endpoint_id}/test": "asks the engine: it writes nothing",
    "POST /api/v1/search-endpoints/{endpoint_id}/try": "asks the engine: it writes nothing",
    "POST /endpoints/{endpoint_id}/test": "asks the engine: it writes nothing",
    "POST /endpoints/{endpoint_id}/try": "asks the engine: it writes nothing",
    "POST /api/v1/judges/{judge_id}/test": "asks the judge: it writes nothing",
    "POST /api/v1/click-logs/{click_log_id}/sample": (
        "draws a sample of the log's queries and answers it: it writes nothing"
    ),
}


def _walk(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, APIRoute]]:
    for route in routes:
        if hasattr(route, "original_router"):  # an included router
            yield from _walk(route.original_router.routes, prefix + route.include_context.prefix)
        elif isinstance(route, APIRoute):
            yield prefix + route.path, route


def mutating_routes(app: FastAPI) -> list[str]:
    """Return "METHOD path" of every POST, PUT, PATCH and DELETE route of the app."""
    return sorted(
        f"{method} {path}"
        for path, route in _walk(list(app.router.routes))
        for method in (route.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"}
    )


@dataclass
class World:
    """Ids of one of everything, owned by the API user (who is an admin)."""

    ids: dict[str, Any] = field(default_factory=dict)
    csrf: str = ""


def _made(response: Any) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body


def _world(api: ApiUser, other: ApiUser, factory: sessionmaker[Session], llm_url: str) -> World:
    with session_scope(factory) as session:
        user = session.get(User, api.id)
        assert user is not None
        user.is_admin = True
    endpoint = make_endpoint(api, URL)
    case = make_case(api, endpoint["id"])
    queries = add_queries(api, case["id"], ["star wars", "alien"])
    query_id = queries["star wars"]
    api.put(
        f"/api/v1/cases/{case['id']}/queries/{query_id}/ratings",
        json={"ratings": [{"doc_id": "d1", "rating": 3}]},
    )
    classic = scorer_id(api, "Classic")
    run_id = finished_run(
        factory,
        case["id"],
        {query_id: {"score": 0.5, "docs": [_doc("d1", 1), _doc("d2", 2)]}},
        scorer=classic,
    )
    with session_scope(factory) as session:
        queued = Run(case_id=case["id"], try_number=1, status="queued", total=2)
        session.add(queued)
        session.flush()
        queued_run_id = queued.id
        sweep = Sweep(
            case_id=case["id"], try_number=1, status="running", grid={"titleBoost": [1, 2]}, total=2
        )
        session.add(sweep)
        session.flush()
        sweep_id = sweep.id
    swept_run_id = finished_run(
        factory,
        case["id"],
        {query_id: {"score": 0.7, "docs": [{"id": "d1", "rank": 1, "fields": {}}]}},
        scorer=classic,
    )
    with session_scope(factory) as session:
        swept = session.get(Run, swept_run_id)
        assert swept is not None
        swept.sweep_id, swept.knobs = sweep_id, {"titleBoost": 2.0}
    api.put(f"/api/v1/cases/{case['id']}/schedule", json={"cron": "@daily"})
    base = f"/api/v1/cases/{case['id']}"
    alert = _made(api.post(f"{base}/alerts", json={"kind": "below", "threshold": 50}))
    note = _made(api.post(f"{base}/annotations", json={"text": "deployed"}))
    hook = _made(api.post("/api/v1/webhooks", json={"name": "ops", "url": "http://127.0.0.1:9/h"}))
    book = _made(api.post("/api/v1/books", json={"name": "B", "scale": [0, 1]}))["id"]
    pair = {"query_text": "star wars", "doc_id": "d1", "fields": {"title": "d1"}}
    _made(api.post(f"/api/v1/books/{book}/pairs", json={"pairs": [pair]}))
    pair_id = api.get(f"/api/v1/books/{book}/pairs").json()[0]["id"]
    _made(api.put(f"/api/v1/books/{book}/pairs/{pair_id}/judgement", json={"rating": 1}))
    team = _made(api.post("/api/v1/teams", json={"name": "Search"}))["id"]
    assert api.put(f"/api/v1/teams/{team}/members", json={"email": other.email}).status_code < 300
    judge_id = _made(api.post("/api/v1/judges", json=JUDGE))["id"]
    with session_scope(factory) as session:
        paused = JudgeRun(book_id=book, judge_id=judge_id, user_id=api.id, status="paused")
        session.add(paused)
        session.flush()
        judge_run_id = paused.id
    add_judge_failure(factory, run_id=judge_run_id, judge_id=judge_id, pair_id=pair_id)
    log_id = _made(api.post("/api/v1/click-logs", json={"name": "shop"}))["id"]
    logged = [{"query_id": "a0", "user_query": "shoes"}]
    _made(api.post(f"/api/v1/click-logs/{log_id}/queries", json=logged))
    add_click_events(api, log_id)
    static = {"name": "offline", "engine": "static"}
    static_id = _made(api.post("/api/v1/search-endpoints", json=static))["id"]
    ids = {
        "judge_run_id": judge_run_id,
        "static_endpoint_id": static_id,
        "kind": "book",
        "user_id": other.id,
        "judge_id": judge_id,
        "model_judge_id": add_model_judge(api, llm_url),
        "endpoint_id": endpoint["id"],
        "spare_endpoint_id": make_endpoint(api, URL, name="spare")["id"],  # no case uses it
        "case_id": case["id"],
        "query_id": query_id,
        "run_id": run_id,
        "queued_run_id": queued_run_id,
        "sweep_id": sweep_id,
        "swept_run_id": swept_run_id,
        "alert_id": alert["id"],
        "annotation_id": note["id"],
        "webhook_id": hook["id"],
        "scorer_id": _made(api.post("/api/v1/scorers", json={"name": "mine", **JS}))["id"],
        "book_id": book,
        "pair_id": pair_id,
        "team_id": team,
        "key_id": _made(api.post("/api/v1/api-keys", json={"name": "spare"}))["id"],
        "click_log_id": log_id,
    }
    return World(ids=ids, csrf=login(api.client, api.email))


def _doc(doc_id: str, rank: int) -> dict[str, Any]:
    return {"id": doc_id, "rank": rank, "fields": {"title": doc_id}}


def _snapshot(factory: sessionmaker[Session]) -> dict[str, list[tuple[Any, ...]]]:
    with session_scope(factory) as session:
        return {
            table.name: sorted((tuple(row) for row in session.execute(select(table))), key=repr)
            for table in Base.metadata.sorted_tables
        }


def _fill(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids.get(value[1:-1], value)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


# The table an INSERT, UPDATE or DELETE writes to.
WRITTEN = re.compile(r'\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)', re.IGNORECASE)


def _writes_a_table(statement: str) -> bool:
    """Whether the statement writes to one of the app's tables (not a temporary one, such as
    the staging tables of a ratings import, which no snapshot sees)."""
    found = WRITTEN.match(statement)
    return found is not None and found.group(1) in Base.metadata.tables


class FailAfterFirstWrite:
    """Armed, it raises InjectedFailure right after the first statement that wrote to one of
    the app's tables."""

    def __init__(self) -> None:
        self.armed = False
        self.fired = False

    def __call__(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if self.armed and _writes_a_table(statement):
            self.armed, self.fired = False, True
            raise InjectedFailure(statement.split("\n")[0][:80])


def test_every_mutating_route_is_covered_or_has_a_reason(app: FastAPI) -> None:
    routes = mutating_routes(app)
    assert len(routes) > 100
    unknown = sorted((set(ROUTES) | set(SKIPPED)) - set(routes))
    assert unknown == [], f"no such routes: {unknown}"
    missing = [r for r in routes if r not in ROUTES and r not in SKIPPED]
    assert missing == [], f"mutating routes neither exercised nor skipped with a reason: {missing}"


def _shown_form(client: TestClient, page: str, action: str) -> dict[str, str]:
    """Return the values of the page's form that posts to ``action`` (or a CSS selector), as
    a browser sends them."""
    selector = action if action.startswith("#") else f"form[action$='{action}']"
    form = one(soup(client.get(page)), selector)
    values: dict[str, str] = {}
    for tag in form.select("input[name]"):
        if tag.get("type") in ("checkbox", "radio") and not tag.has_attr("checked"):
            continue
        values.setdefault(str(tag["name"]), str(tag.get("value", "")))
    for area in form.select("textarea[name]"):
        values[str(area["name"])] = area.get_text()
    for select_tag in form.select("select[name]"):
        chosen = select_tag.select_one("option[selected]") or select_tag.select_one("option")
        if chosen is not None:  # an option without a value sends its text
            values[str(select_tag["name"])] = str(chosen.get("value", chosen.get_text(strip=True)))
    return values


class CommitsWithWrites:
    """Counts the commits that ended a transaction in which something was written."""

    def __init__(self) -> None:
        self.writes = 0
        self.commits = 0

    def wrote(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith(WRITES):
            self.writes += 1

    def committed(self, session: Session) -> None:
        if self.writes and not session.in_nested_transaction():  # not a savepoint's release
            self.commits, self.writes = self.commits + 1, 0


def _request(route: str, api: ApiUser, client: TestClient, world: World) -> Any:
    call = ROUTES[route]
    method, template = route.split(" ", 1)
    path = template.format(**{**world.ids, **{k: world.ids[v] for k, v in call.path.items()}})
    if call.page is not None:
        shown = _shown_form(client, call.page.format(**world.ids), call.selector or path)
        filled = {k: str(_fill(v, world.ids)) for k, v in (call.form or {}).items()}
        data = {**shown, "csrf_token": world.csrf, **filled}
        return client.request(method, path, data=data, follow_redirects=False)
    if call.form is not None:
        data = {
            "csrf_token": world.csrf,
            **{k: str(_fill(v, world.ids)) for k, v in call.form.items()},
        }
        files = None if call.upload is None else {"file": call.upload}
        return client.request(method, path, data=data, files=files, follow_redirects=False)
    if call.content is not None:
        headers = {**api.headers, "content-type": call.content_type}
        return api.client.request(method, path, content=call.content, headers=headers)
    return api.client.request(method, path, json=_fill(call.json, world.ids), headers=api.headers)


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLM]:
    """A language model on loopback, for the judge that is tried on the book's pairs."""
    with fake_llm() as server:
        yield server


async def _no_round(*_args: Any) -> int:
    return 0


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hold the app's background rounds (the run reaper, the SQLite minute): each writes and
    commits on its own connections every few seconds, which a test of one request would
    count as the request's (a second commit, or a table changed by a request that failed)."""
    monkeypatch.setattr(RunManager, "reap", _no_round)
    monkeypatch.setattr("app.jobs.ticker.MINUTE", _no_round)


@pytest.fixture
def world(
    api: ApiUser,
    other_api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    model: FakeLLM,
    quiet: None,
) -> World:
    """One of everything; the API key's first use already recorded (not during a request)."""
    make_api_user(client, session_factory, "dave@example.com")  # not yet in the team
    made = _world(api, other_api, session_factory, model.url)
    api.get("/api/v1/cases")
    return made


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_request_failing_after_its_first_write_changes_nothing(
    route: str,
    app: FastAPI,
    api: ApiUser,
    client: TestClient,
    session_factory: sessionmaker[Session],
    world: World,
) -> None:
    before = _snapshot(session_factory)
    failing = FailAfterFirstWrite()
    engine = app.state.engine
    event.listen(engine, "after_cursor_execute", failing)
    failing.armed = True
    try:
        status: int | str = _request(route, api, client, world).status_code
    except InjectedFailure as exc:
        status = f"raised {exc}"
    finally:
        failing.armed = False
        event.remove(engine, "after_cursor_execute", failing)
    assert failing.fired == ROUTES[route].writes, f"{route} answered {status} without writing"
    assert _snapshot(session_factory) == before, f"{route} kept some of its work ({status})"


# Starting or cancelling a run (a sweep, a judge run, a pull) hands it to the run manager once
# committed, which a rolled back test has none of (tests/runs/, tests/sweeps/ and
# tests/clicks/test_pull.py start them for real).
STARTS_RUNS = {
    "POST /books/{book_id}/judging",
    "POST /books/{book_id}/judge-runs/{run_id}/retry",
    "POST /cases/{case_id}/sweeps",
    "POST /api/v1/click-logs/{click_log_id}/pull",
    "POST /click-logs/{click_log_id}/pull",
    "POST /api/v1/books/{book_id}/judge-runs",
    "POST /api/v1/books/{book_id}/judge-runs/{run_id}/resume",
    "POST /books/{book_id}/judge-runs/{run_id}/resume",
    "POST /api/v1/cases/{case_id}/sweeps",
    "POST /api/v1/cases/{case_id}/runs",
    "POST /api/v1/cases/{case_id}/runs/{run_id}/cancel",
    "POST /cases/{case_id}/runs",
    "POST /cases/{case_id}/runs/{run_id}/cancel",
}


@pytest.mark.parametrize("route", sorted(set(ROUTES) - STARTS_RUNS))
def test_a_request_commits_its_writes_once(
    route: str, app: FastAPI, api: ApiUser, client: TestClient, world: World
) -> None:
    counting = CommitsWithWrites()
    engine = app.state.engine
    event.listen(engine, "after_cursor_execute", counting.wrote)
    event.listen(Session, "after_commit", counting.committed)
    try:
        status = _request(route, api, client, world).status_code
    finally:
        event.remove(engine, "after_cursor_execute", counting.wrote)
        event.remove(Session, "after_commit", counting.committed)
    # A service that commits on its own shows as a second commit (or a commit of a 4xx).
    expected = 1 if ROUTES[route].writes and status < 400 else 0
    assert (status, counting.commits) == (status, expected), f"{route} answered {status}"
