"""Hostile engine or mapper output is that query's business, never a 500 or a failed run.

A doc id with a NUL, a title with a NUL and an unpaired surrogate (which PostgreSQL cannot
store, nor a JSON answer encode), a field nested hundreds deep, a total beyond 32 bits: each
is made storable where answers become docs (app.search.storable). Docs nested deeper than
can be read are that query's error. A row the database still refuses is that query's error
and the rest of the chunk is stored (app.runs.query_rows).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Case
from app.runs import inputs as run_inputs
from app.runs import service as run_service
from app.runs import store as run_store
from app.runs.plan import FetchedQuery, score_fetched_metrics
from app.runs.query_rows import UNSTORABLE
from app.search.storable import CUT, MAX_FIELD_DEPTH, MAX_NUM_FOUND
from tests.fixtures.users import ApiUser
from tests.support.api import MOVIES_TEMPLATE, add_queries, make_case, make_endpoint
from tests.support.hostile_engine import HOSTILE_MAPPER, HostileEngine, hostile_engine

TEXTS = ["nul", "deep", "count", "plain"]
CLEAN_ID, CLEAN_TITLE = "a\ufffdb", "T\ufffd\ufffditle"
TOO_DEEP = "the mapper returned docs nested too deeply to read"


def _cut(levels: int) -> Any:
    """The deep field as stored: its first lists kept, the rest cut."""
    value: Any = CUT
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture(scope="module")
def engine() -> Iterator[HostileEngine]:
    with hostile_engine() as running:
        yield running


def _searchapi(api: ApiUser, engine: HostileEngine) -> int:
    body = {"name": "h", "engine": "searchapi", "url": engine.url + "/api"}
    response = api.post("/api/v1/search-endpoints", json={**body, "mapper_code": HOSTILE_MAPPER})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _try(api: ApiUser, endpoint_id: int, text: str, **body: Any) -> dict[str, Any]:
    response = api.post(
        f"/api/v1/search-endpoints/{endpoint_id}/try", json={"query_text": text, **body}
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _shown(docs: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    return [(d["id"], d["fields"].get("title"), d["fields"].get("director")) for d in docs]


EXPECTED = {
    "nul": [(CLEAN_ID, CLEAN_TITLE, None)],
    "deep": [("d", "Deep", _cut(MAX_FIELD_DEPTH))],
    "count": [("1", "Plain", "Lucas")],
    "plain": [("1", "Plain", "Lucas")],
}
FOUND = {"nul": 1, "deep": 1, "count": MAX_NUM_FOUND, "plain": 1}


@pytest.mark.parametrize("text", TEXTS)
def test_a_try_shows_a_hostile_engines_docs_cleaned(
    api: ApiUser, engine: HostileEngine, text: str
) -> None:
    endpoint_id = int(make_endpoint(api, engine.index_url)["id"])
    result = _try(
        api, endpoint_id, text, template=MOVIES_TEMPLATE, field_spec="id:_id title:title director"
    )
    assert result["error"] is None
    assert (_shown(result["docs"]), result["num_found"]) == (EXPECTED[text], FOUND[text])


@pytest.mark.parametrize("text", [*TEXTS, "deeper"])
def test_a_try_shows_a_hostile_mappers_docs_cleaned(
    api: ApiUser, engine: HostileEngine, text: str
) -> None:
    result = _try(api, _searchapi(api, engine), text, template="q=#$query##")
    if text == "deeper":
        assert (result["error"], result["docs"]) == (TOO_DEEP, [])
        return
    assert result["error"] is None
    want = [(i, t, d if text == "deep" else None) for i, t, d in EXPECTED[text]]
    assert (_shown(result["docs"]), result["num_found"]) == (want, FOUND[text])


@pytest.mark.runner
def test_a_run_stores_hostile_answers_and_errs_only_the_unreadable_query(
    api: ApiUser, engine: HostileEngine
) -> None:
    endpoint_id = int(make_endpoint(api, engine.index_url)["id"])
    native = make_case(api, endpoint_id, field_spec="id:_id title:title director")
    mapped = make_case(
        api, _searchapi(api, engine), query_template="q=#$query##", field_spec="id title director"
    )
    for case, texts in ((native, TEXTS), (mapped, [*TEXTS, "deeper"])):
        add_queries(api, int(case["id"]), texts)
        run = api.post(f"/api/v1/cases/{case['id']}/runs?wait=true").json()
        assert run["status"] == "finished", run
        got = {q["text"]: q for q in run["queries"]}
        assert {t: q["error"] for t, q in got.items()} == {
            t: TOO_DEEP if t == "deeper" else None for t in texts
        }
        for text in TEXTS:
            want = EXPECTED[text]
            if case is mapped:
                want = [(i, t, d if text == "deep" else None) for i, t, d in want]
            assert _shown(got[text]["docs"]) == want, text
            assert got[text]["num_found"] == FOUND[text]


def test_a_row_the_database_refuses_is_that_querys_error_and_the_rest_is_stored(
    api: ApiUser, session_factory: sessionmaker[Session]
) -> None:
    # Results built by hand, past the cleaning: a total no integer column holds (PostgreSQL
    # refuses it, SQLite's driver cannot even bind it).
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    case_id = int(make_case(api, endpoint["id"])["id"])
    add_queries(api, case_id, ["a", "b", "c"])
    found = {"a": 3, "b": 2**70, "c": 1}
    for chunked in (True, False):
        with session_scope(session_factory) as session:
            case = session.get(Case, case_id)
            assert case is not None
            run_id = run_service.create_run(session=session, case=case).id
            if chunked:
                [chunk] = run_store.plan_chunks(session=session, run_id=run_id, chunk_size=10)
                plan = run_inputs.load_plan(session=session, run_id=run_id, query_ids=chunk)
                assert run_store.start_chunk(session=session, plan=plan)
            else:
                plan = run_inputs.load_plan(session=session, run_id=run_id)
                run_store.mark_running(session=session, plan=plan)
            fetched = [
                FetchedQuery(
                    plan=q,
                    docs=[{"id": "1", "rank": 1, "fields": {"title": q.text}}],
                    num_found=found[q.text],
                    error=None,
                    duration_ms=1.0,
                )
                for q in plan.queries
            ]
            outcomes = score_fetched_metrics(plan=plan, fetched=fetched, ratings={})[0]
            if chunked:
                run_store.store_chunk(
                    session=session,
                    plan=plan,
                    chunk=0,
                    query_ids=chunk,
                    fetched=fetched,
                    outcomes=outcomes,
                    ratings={},
                )
            else:
                run_store.finish_run(
                    session=session, plan=plan, fetched=fetched, outcomes=outcomes, ratings={}
                )
        run = api.get(f"/api/v1/cases/{case_id}/runs/{run_id}").json()
        assert (run["status"], run["errors"]) == ("finished", 1), chunked
        got = {
            q["text"]: (q["status"], q["num_found"], q["error"], q["docs"]) for q in run["queries"]
        }
        assert got["b"][:2] + got["b"][3:] == ("error", None, [])
        assert got["b"][2] in (
            UNSTORABLE.format(reason="NumericValueOutOfRange"),
            UNSTORABLE.format(reason="OverflowError"),
        )
        for text in ("a", "c"):
            assert got[text][:3] == ("unscored", found[text], None)
            assert [d["fields"]["title"] for d in got[text][3]] == [text]
